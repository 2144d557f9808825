package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/sdk"
)

// Settings configure a member of a job's group.
type Settings struct {
	// JS reaches the bucket.
	JS jetstream.JetStream
	// Bucket is the KV bucket of the group's leases; it must exist, with Replicas
	// replicas (0: any number).
	Bucket   string
	Replicas int
	// Job names the job; its keys start with it.
	Job string
	// Tasks are the job's tasks, the same list for every member.
	Tasks []string
	// TTL is the lease timeout of the member and of its tasks.
	TTL time.Duration
	// Agree names what every member must have the same of, beside the task list: the
	// job's graph, its partition count, its checkpoint storage. A member whose values
	// differ from those the group's first member recorded is refused, naming them.
	Agree map[string]string
	// Control is the member's control endpoint (host:port), "" for none.
	Control string
	// Clock is the member's clock (nil: ownership.SystemClock); Join refuses one that
	// disagrees with the NATS server's by more than half the leases' margin.
	Clock ownership.Clock
	// Logger receives claims and hand-overs (nil: none).
	Logger hclog.Logger
	// Settle is how long a member that joined waits before it claims tasks (0: none), so
	// that runners started together share the tasks from the start instead of the first
	// claiming all and handing them over after their first checkpoints: Kafka's
	// group.initial.rebalance.delay.ms.
	Settle time.Duration
}

// Group is one member's view of its job's group: its own member lease and the task
// leases it holds. Its methods are safe for one goroutine at a time.
type Group struct {
	s      Settings
	id     string
	holder ownership.Holder
	log    hclog.Logger
	kv     jetstream.KeyValue
	member *ownership.Lease
	tasks  map[string]*natsjs.KVLease // every task's record
	others map[string]*natsjs.KVLease // members' records, by key, as they are found
	joined time.Time                  // when Join made it a member, on its clock
	alone  bool                       // no other member was live at Join: a new run

	mu   sync.Mutex
	held map[string]*ownership.Lease
}

// Join makes the caller a member of the job's group: it checks the settings and the
// bucket, and takes a member lease under a new random id. It claims no task: Balance does.
func Join(ctx context.Context, s Settings) (*Group, error) {
	what := fmt.Sprintf("group of job %q on KV bucket %s", s.Job, s.Bucket)
	switch {
	case s.Job == "" || strings.ContainsAny(s.Job, ".*> "):
		return nil, fmt.Errorf("%s: the job name must be one KV key token (no dots, wildcards or spaces)", what)
	case len(s.Tasks) == 0:
		return nil, fmt.Errorf("%s: no tasks", what)
	case s.TTL <= 0:
		return nil, fmt.Errorf("%s: lease timeout %s: must be positive", what, s.TTL)
	}
	seen := map[string]bool{}
	for _, t := range s.Tasks {
		if seen[t] {
			return nil, fmt.Errorf("%s: task %q is listed twice", what, t)
		}
		seen[t] = true
	}
	var raw [6]byte
	rand.Read(raw[:])
	g := &Group{s: s, id: hex.EncodeToString(raw[:]), log: s.Logger, tasks: map[string]*natsjs.KVLease{},
		others: map[string]*natsjs.KVLease{}, held: map[string]*ownership.Lease{}}
	if g.log == nil {
		g.log = hclog.NewNullLogger()
	}
	g.holder = ownership.Self(s.Job, s.Control)
	g.holder.Member = g.id
	for _, t := range s.Tasks {
		l, err := natsjs.OpenKVLease(ctx, s.JS, s.Bucket, taskKey(s.Job, t), s.Replicas)
		if err != nil {
			return nil, fmt.Errorf("%s: task %q: %w", what, t, err)
		}
		g.tasks[t] = l
	}
	kv, err := s.JS.KeyValue(ctx, s.Bucket)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	g.kv = kv
	if err := g.agree(ctx); err != nil {
		return nil, err
	}
	store, err := natsjs.OpenKVLease(ctx, s.JS, s.Bucket, memberKey(s.Job, g.id), s.Replicas)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	t0 := g.clock().Now()
	if g.member, err = ownership.Acquire(ctx, store, g.holder, g.opts("member "+g.id)); err != nil {
		return nil, fmt.Errorf("%s: join: %w", what, err)
	}
	if err := g.checkClock(ctx, t0, g.clock().Now()); err != nil {
		g.member.Release(ctx)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// The first member of a new run of the job clears the marks of the last run's
	// finished tasks.
	ids, err := g.liveMembers(ctx, g.clock().Now())
	if err == nil && len(ids) == 1 {
		g.alone = true
		err = g.clearFinished(ctx)
	}
	if err != nil {
		g.member.Release(ctx)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	g.joined = g.clock().Now()
	g.log.Info("joined the group", "job", s.Job, "member", g.id, "tasks", len(s.Tasks))
	return g, nil
}

func memberKey(job, id string) string { return job + ".member." + id }
func taskKey(job, task string) string { return job + ".task." + task }
func memberPrefix(job string) string  { return job + ".member." }
func (g *Group) opts(what string) ownership.Options {
	return ownership.Options{TTL: g.s.TTL, Where: fmt.Sprintf("%s of job %q (KV bucket %s)", what, g.s.Job, g.s.Bucket), Logger: g.log, Clock: g.s.Clock}
}

func (g *Group) clock() ownership.Clock {
	if g.s.Clock != nil {
		return g.s.Clock
	}
	return ownership.SystemClock{}
}

// checkClock compares the member's clock with the NATS server's: the server stamped the
// member record it stored between t0 and t1 by the member's clock, unless the two
// disagree. Members judge each other's leases expired by their own clocks, so each may
// be off the server's by at most half the leases' margin (a fifth of the timeout).
func (g *Group) checkClock(ctx context.Context, t0, t1 time.Time) error {
	e, err := g.get(ctx, memberKey(g.s.Job, g.id))
	if err != nil {
		return fmt.Errorf("read back the member record: %w", err)
	}
	stored := e.Stored
	var skew time.Duration
	switch {
	case stored.Before(t0):
		skew = t0.Sub(stored)
	case stored.After(t1):
		skew = -stored.Sub(t1)
	}
	limit := (g.s.TTL - ownership.Valid(g.s.TTL)) / 2
	if skew > limit || -skew > limit {
		way := "ahead of"
		if skew < 0 {
			way, skew = "behind", -skew
		}
		return fmt.Errorf("this machine's clock is at least %s %s the NATS server's, more than half the leases' margin (%s, a tenth of the lease timeout %s): members would take over leases still live, or wait on dead ones; set the clocks right (NTP) or raise the timeout",
			skew.Round(time.Millisecond), way, limit, g.s.TTL)
	}
	return nil
}

// Alone reports whether no other member of the group was live when this one joined: the
// member starts a new run of the job (its finished marks are cleared).
func (g *Group) Alone() bool { return g.alone }

// Tasks returns the job's tasks.
func (g *Group) Tasks() []string { return g.s.Tasks }

// ID returns the member's id, which its leases carry (ownership.Holder.Member).
func (g *Group) ID() string { return g.id }

// Held returns the tasks the member holds, sorted; a task whose lease was lost is no
// longer among them.
func (g *Group) Held() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropLostLocked()
	out := make([]string, 0, len(g.held))
	for t := range g.held {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Lease returns the lease of a task the member holds: its Check is the task's fence, its
// Record().Epoch the task's fencing token.
func (g *Group) Lease(task string) (*ownership.Lease, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.held[task]
	return l, ok
}

func (g *Group) dropLostLocked() {
	for t, l := range g.held {
		select {
		case <-l.Lost():
			delete(g.held, t)
			g.log.Warn("lost a task to another member", "task", t)
		default:
		}
	}
}

// Release hands a task the member holds over: its lease is released, and any member may
// claim it at once. Call it once the task's work up to now is checkpointed.
func (g *Group) Release(ctx context.Context, task string) error {
	g.mu.Lock()
	l, ok := g.held[task]
	delete(g.held, task)
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("task %q of job %q: not held by member %s", task, g.s.Job, g.id)
	}
	if err := l.Release(ctx); err != nil {
		return fmt.Errorf("hand over task %q of job %q: %w", task, g.s.Job, err)
	}
	g.log.Info("handed a task over", "task", task)
	return nil
}

// Leave releases every task the member holds, then its membership.
func (g *Group) Leave(ctx context.Context) error {
	var errs []error
	for _, t := range g.Held() {
		errs = append(errs, g.Release(ctx, t))
	}
	if err := g.member.Release(ctx); err != nil {
		errs = append(errs, fmt.Errorf("leave the group of job %q: %w", g.s.Job, err))
	}
	return errors.Join(errs...)
}

// readRecord reads the live record of a lease store: ok false when there is none, or
// when it is released or expired.
func readRecord(ctx context.Context, l sdk.LeaseStore, now time.Time) (ownership.Record, bool, error) {
	cur, err := l.ReadLease(ctx)
	if errors.Is(err, sdk.ErrNotFound) {
		return ownership.Record{}, false, nil
	}
	if err != nil {
		return ownership.Record{}, false, err
	}
	rec, err := ownership.DecodeRecord(cur.Data)
	if err != nil {
		return ownership.Record{}, false, err
	}
	return rec, rec.Live(now), nil
}

// get reads key from the bucket stream's leader (natsjs.LeaderGet): a member acts on what
// it reads, and a replica may answer a direct get from behind the leader. A missing key
// is jetstream.ErrKeyNotFound.
func (g *Group) get(ctx context.Context, key string) (natsjs.KVEntry, error) {
	e, err := natsjs.LeaderGet(ctx, g.s.JS, g.s.Bucket, key)
	if errors.Is(err, sdk.ErrNotFound) {
		return e, fmt.Errorf("%w: %w", jetstream.ErrKeyNotFound, err)
	}
	return e, err
}

// listTimeout bounds a listing of the bucket's keys: a listing is a watch that ends when
// the bucket has sent every key, which a stream between leaders may never do.
const listTimeout = 15 * time.Second

// listKeys returns the keys of the bucket that match filter. A listing that does not end
// within listTimeout, or before ctx ends, is an error, never a shorter list.
func listKeys(ctx context.Context, kv jetstream.KeyValue, filter string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	lister, err := kv.ListKeysFiltered(ctx, filter)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer lister.Stop()
	var keys []string
	for key := range lister.Keys() {
		keys = append(keys, key)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("list keys %s: %w", filter, context.Cause(ctx))
	}
	return keys, nil
}

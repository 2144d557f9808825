package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Origin is where the tasks of a job restored from a savepoint start (`runner run --from
// MANIFEST`), on key <job>.origin: each task's savepoint, and the epoch its lease had when
// the origin was set. A task restores the newest of its own checkpoints taken at a higher
// epoch (taken since, by a run started from the origin), else its savepoint: so runners
// that join later, or claim a task from one that died, resume where the run from the
// savepoint got to, not before it.
type Origin struct {
	Manifest string                `json:"manifest"`
	Tasks    map[string]OriginTask `json:"tasks"`
	At       time.Time             `json:"at"`
}

// OriginTask is one task's start in an Origin.
type OriginTask struct {
	Pointer string `json:"pointer"`
	Epoch   int64  `json:"epoch"`
}

func originKey(job string) string { return job + ".origin" }

// Origin returns the job's origin, nil when it has none (its tasks resume their own
// latest checkpoints, or start fresh).
func (g *Group) Origin(ctx context.Context) (*Origin, error) {
	o, _, err := g.readOrigin(ctx)
	return o, err
}

func (g *Group) readOrigin(ctx context.Context) (*Origin, uint64, error) {
	e, err := g.get(ctx, originKey(g.s.Job))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read the origin of job %q (KV bucket %s): %w", g.s.Job, g.s.Bucket, err)
	}
	var o Origin
	if err := json.Unmarshal(e.Value, &o); err != nil {
		return nil, 0, fmt.Errorf("the origin of job %q (key %s of KV bucket %s) does not decode: %w", g.s.Job, originKey(g.s.Job), g.s.Bucket, err)
	}
	return &o, e.Revision, nil
}

// originWait is how long a member started from a savepoint waits for the member that
// records the origin (the live member of the smallest id) to record it.
const originWait = 10 * time.Second

// SetOrigin makes manifest, whose savepoints are pointers (by task, every task of the
// job), the job's origin, and must be called before the member claims a task. Runners
// started from one savepoint together agree on it: the live member of the smallest id
// records it, the others wait for it. A runner started from the savepoint the running
// job started from joins it; one started from another savepoint is refused while any
// member runs a task of the job: it must be stopped first.
func (g *Group) SetOrigin(ctx context.Context, manifest string, pointers map[string]string) error {
	var missing []string
	for _, t := range g.s.Tasks {
		if pointers[t] == "" {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("savepoint %s has no savepoint of task %s of job %q: it is not a savepoint of this job's tasks", manifest, strings.Join(missing, ", "), g.s.Job)
	}
	deadline := g.clock().Now().Add(originWait)
	for {
		now := g.clock().Now()
		cur, rev, err := g.readOrigin(ctx)
		if err != nil {
			return err
		}
		members, err := g.liveMembers(ctx, now)
		if err != nil {
			return err
		}
		// An origin recorded before every live member joined is an earlier run's.
		fresh := cur != nil && !cur.At.Before(g.earliestJoin(ctx, members, now))
		if fresh && cur.Manifest == manifest {
			return nil
		}
		owners, err := g.owners(ctx, now)
		if err != nil {
			return err
		}
		if len(owners) > 0 {
			running := "no savepoint"
			if fresh {
				running = "savepoint " + cur.Manifest
			}
			return fmt.Errorf("job %q is running (from %s) on members %s: stop it (runner stop) before restoring savepoint %s, or start this runner without --from to join it",
				g.s.Job, running, strings.Join(distinct(owners), ", "), manifest)
		}
		if members[0] == g.id {
			return g.writeOrigin(ctx, manifest, pointers, rev)
		}
		if now.After(deadline) {
			return fmt.Errorf("job %q: member %s, which records the savepoint the job restores, has not recorded savepoint %s within %s: start every runner of the job from the same savepoint",
				g.s.Job, members[0], manifest, originWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// earliestJoin returns when the earliest of members (live member ids, this one among
// them) joined the group, by its record.
func (g *Group) earliestJoin(ctx context.Context, members []string, now time.Time) time.Time {
	earliest := g.member.Record().Holder.Since
	for _, id := range members {
		if l := g.others[memberKey(g.s.Job, id)]; l != nil {
			if rec, live, err := readRecord(ctx, l, now); err == nil && live && rec.Holder.Since.Before(earliest) {
				earliest = rec.Holder.Since
			}
		}
	}
	return earliest
}

// distinct returns the distinct values of m, sorted.
func distinct(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// writeOrigin records the origin at the tasks' current epochs, replacing the one at
// revision rev (0: none).
func (g *Group) writeOrigin(ctx context.Context, manifest string, pointers map[string]string, rev uint64) error {
	o := Origin{Manifest: manifest, Tasks: map[string]OriginTask{}, At: g.clock().Now().UTC()}
	for _, t := range g.s.Tasks {
		var epoch int64
		rec, _, err := readRecord(ctx, g.tasks[t], g.clock().Now())
		if err != nil {
			return fmt.Errorf("task %q of job %q: %w", t, g.s.Job, err)
		}
		epoch = rec.Epoch
		o.Tasks[t] = OriginTask{Pointer: pointers[t], Epoch: epoch}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = g.kv.Create(ctx, originKey(g.s.Job), b)
	} else {
		_, err = g.kv.Update(ctx, originKey(g.s.Job), b, rev)
	}
	if err != nil {
		return fmt.Errorf("record savepoint %s as the origin of job %q (KV bucket %s): %w", manifest, g.s.Job, g.s.Bucket, err)
	}
	g.log.Info("the job restores from a savepoint", "manifest", manifest)
	return nil
}

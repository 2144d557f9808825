package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/cluster"
	"github.com/flowstate/flowstate/runtime/config"
	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// Distributed runs this runner's share of a job that any number of runners, on any
// machines, run together (distributed mode, cluster.enabled), the way Kafka Streams runs
// a topology: the job is cut at each keyed exchange (dataflow.Job.Cut), every
// sub-topology runs as job.parallelism tasks, and the exchanges are repartition streams
// in JetStream. The runner joins the job's group of runners on a NATS KV bucket
// (runtime/cluster), claims its fair share of the tasks, and runs each task it holds as a
// job of its own through an Executor, with the task's lease (its fencing token) in place
// of the job's, its own checkpoints in the job's checkpoint storage, restored on its own.
// Tasks beyond its share it hands over after a checkpoint; tasks of a runner that died
// it claims once their leases expire (at once when that runner ran on this machine).
type Distributed struct {
	// Config is the resolved configuration (cluster.enabled set); Host starts its plugins,
	// which every task the runner holds shares.
	Config *config.Config
	Host   *pluginhost.Host
	// Logger receives the run's log; nil discards it.
	Logger hclog.Logger
	// From is "" (every task resumes its own latest checkpoint, or starts fresh), or the
	// manifest of a savepoint of the job (runner savepoint in distributed mode): its tasks
	// restore their savepoints, unless they have checkpoints taken since.
	From string
	// OnJoined, if set, is called once the runner is a member of the job's group, with
	// its member id, its control endpoint's address and the file of its token.
	OnJoined func(member, addr, tokenFile string)
}

// balanceEvery is how often a member looks at the group: claims free tasks, hands over
// those beyond its share, and reaps the tasks whose runs ended.
const balanceEvery = 500 * time.Millisecond

// settle is how long a runner that joined waits before it claims tasks, so that runners
// started together share the tasks from the start (cluster.Settings.Settle).
const settle = 2 * balanceEvery

// Run runs the runner's share of job until the job ends everywhere, ctx is cancelled (the
// runner leaves the group, and others take its tasks over), or a task fails for good
// (then the runner leaves with its error). A task's restart strategy governs its
// failures, as a whole job's does on one runner.
func (d *Distributed) Run(ctx context.Context, job *dataflow.Job) error {
	log := d.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	cfg := d.Config
	topo, err := job.Cut()
	if err != nil {
		return err
	}
	nc, js, err := natsjs.ConnFromConfig(cfg.NATS).Connect(ctx, fmt.Sprintf("distributed job %q", job.Name))
	if err != nil {
		return err
	}
	defer nc.Close()
	ep, err := listenGroup(ctx, cfg, js, job.Name, log)
	if err != nil {
		return err
	}
	defer ep.srv.Close()
	ttl := cfg.Job.LeaseTimeout
	if ttl <= 0 {
		ttl = config.DefaultLeaseTimeout
	}
	tasks := taskIDs(topo, job.Parallelism)
	g, err := cluster.Join(ctx, cluster.Settings{
		JS: js, Bucket: cfg.Cluster.Bucket, Replicas: cfg.Cluster.Replicas, Job: job.Name, Tasks: tasks, TTL: ttl,
		Agree: agreement(cfg, job, topo), Control: ep.srv.Addr(), Logger: log, Settle: settle,
	})
	if err != nil {
		return err
	}
	// A fresh run over an earlier run's frames is refused (refuseFreshOverFrames); the
	// frames are counted at the join, before a runner that joined alone at the same moment
	// claims anything (cluster.Settings.Settle), let alone commits frames. The exchanges'
	// stream comes after the bucket, which Join checks: a runner refused for a missing or
	// other bucket leaves no stream behind.
	var frames uint64
	if g.Alone() && d.From == "" {
		frames, err = natsjs.RepartitionStreamFrames(ctx, natsjs.ConnFromConfig(cfg.NATS), cfg.Cluster.StreamFor(job.Name))
	}
	var ex *exchanges
	if err == nil {
		ex, err = newExchanges(ctx, cfg, topo, log)
	}
	if err == nil && frames > 0 {
		var o *cluster.Origin
		if o, err = g.Origin(ctx); err == nil && o == nil {
			err = ex.refuseFreshOverFrames(ctx, cfg, d.Host, job.Name, tasks, frames)
		}
	}
	if err != nil {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		g.Leave(lctx)
		return err
	}
	log.Info("control endpoint listening", "address", ep.srv.Addr(), "job", job.Name, "token_file", ep.srv.TokenFile(), "access", cfg.Control.Access())
	if d.OnJoined != nil {
		d.OnJoined(g.ID(), ep.srv.Addr(), ep.srv.TokenFile())
	}
	m := &member{d: d, cfg: cfg, log: log, g: g, topo: topo, ex: ex, running: map[string]*taskRun{}, started: time.Now().UTC(),
		checkTarget: savepointTargetCheck(cfg, job.Name)}
	if err = d.origin(ctx, g, job.Name); err == nil {
		if m.origin, err = g.Origin(ctx); err == nil {
			err = (&Launch{Host: d.Host}).bounded(ctx, log, m.run)
		}
	}
	if errors.Is(err, errJobStopped) || errors.Is(err, errJobFinished) {
		log.Info("the job ended", "why", err)
		err = nil
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if lerr := g.Leave(lctx); lerr != nil {
		log.Warn("leaving the group", "error", lerr)
	}
	return err
}

// origin makes the savepoint of From the job's origin, when From is set.
func (d *Distributed) origin(ctx context.Context, g *cluster.Group, job string) error {
	if d.From == "" {
		return nil
	}
	pointers, err := readManifest(ctx, d.Config, d.Host, job, d.From)
	if err != nil {
		return err
	}
	return g.SetOrigin(ctx, d.From, pointers)
}

// taskIDs names the tasks of a topology run at parallelism parts: the operator heading
// each sub-topology, a dash and the partition ("source-0", "count-3").
func taskIDs(topo *dataflow.Topology, parts int) []string {
	var out []string
	for k := range topo.SubTopologies() {
		for p := range parts {
			out = append(out, taskID(topo, k, p))
		}
	}
	return out
}

func taskID(topo *dataflow.Topology, k, p int) string { return topo.Head(k) + "-" + strconv.Itoa(p) }

// parseTask returns the sub-topology and partition of task id t.
func parseTask(topo *dataflow.Topology, t string) (k, p int, err error) {
	i := strings.LastIndexByte(t, '-')
	if i < 0 {
		return 0, 0, fmt.Errorf("task %q: not a task of the job", t)
	}
	if p, err = strconv.Atoi(t[i+1:]); err != nil {
		return 0, 0, fmt.Errorf("task %q: not a task of the job", t)
	}
	for k := range topo.SubTopologies() {
		if topo.Head(k) == t[:i] {
			return k, p, nil
		}
	}
	return 0, 0, fmt.Errorf("task %q: not a task of the job", t)
}

// TaskJobName is the name of the job a task runs as, under which its checkpoints are
// kept in the checkpoint storage: the job's name, a dot and the task's id.
func TaskJobName(job, task string) string { return job + "." + task }

// agreement is what every runner of the job must have the same of (cluster.Settings.Agree):
// the job's graph and its parallelism (the partition count), the state backend, and the
// checkpoint storage and its directory, where the tasks' checkpoints are.
func agreement(cfg *config.Config, job *dataflow.Job, topo *dataflow.Topology) map[string]string {
	var ops []string
	for _, op := range job.Shape().Operators {
		ops = append(ops, op.ID+"="+op.Type)
	}
	return map[string]string{
		config.KeyJobType:           job.Type,
		"job graph":                 strings.Join(ops, " -> "),
		config.KeyJobParallelism:    strconv.Itoa(job.Parallelism),
		config.KeyJobMaxParallelism: strconv.Itoa(job.MaxParallelism),
		config.KeyStateBackend:      cfg.StateBackend,
		config.KeyCheckpointStorage: cfg.CheckpointStorage,
		config.KeyCheckpointDir:     cfg.Checkpointing.Dir,
		config.KeyClusterStream:     cfg.Cluster.StreamFor(job.Name),
		"sub-topologies":            strconv.Itoa(topo.SubTopologies()),
	}
}

// member is the runner's membership of the job's group while it runs: the tasks it holds
// and their runs.
type member struct {
	d       *Distributed
	cfg     *config.Config
	log     hclog.Logger
	g       *cluster.Group
	topo    *dataflow.Topology
	ex      *exchanges
	origin  *cluster.Origin
	running map[string]*taskRun
	// checkTarget checks the savepoint targets requests name, as a runner's control
	// endpoint does (savepointTargetCheck).
	checkTarget control.TargetCheck
	// runCtx is the context of the member's run, which its task runs live in (a turn of
	// its loop has a shorter one: step).
	runCtx context.Context
	// stopping is the stop of the job the member takes part in ("": none); started and
	// published are when the member joined and last published its status.
	stopping           string
	started, published time.Time
}

// run balances the group every balanceEvery, serves the job's requests and publishes the
// member's status, until ctx ends, a stop of the job finished, or a task fails for good;
// it returns once every task run has ended.
func (m *member) run(ctx context.Context) error {
	defer m.stopAll()
	m.runCtx = ctx
	tick := time.NewTicker(balanceEvery)
	defer tick.Stop()
	for {
		if err := m.step(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// stepTimeout bounds one turn of a member's loop: every bucket operation in it (a
// JetStream request whose answer is lost, while a stream changes leaders, would otherwise
// wait for ever, and the member would stop balancing and publishing).
const stepTimeout = 30 * time.Second

// step is one turn of the member's loop: reap the ended task runs, balance, serve the
// job's requests, publish the status, and see whether the job finished.
func (m *member) step(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := m.reap(ctx); err != nil {
		return err
	}
	if err := m.balance(ctx); err != nil {
		return err
	}
	if err := m.serve(ctx); err != nil {
		return err
	}
	m.publish(ctx, false)
	return m.finished(ctx)
}

// balance claims free tasks up to the member's share and starts them, and hands over
// those beyond it (not while the job is being stopped).
func (m *member) balance(ctx context.Context) error {
	plan, err := m.g.Balance(ctx)
	switch {
	case m.runCtx.Err() != nil:
		return nil
	case err != nil:
		// A member whose own lease lapsed (frozen, cut off from NATS) claims nothing; its
		// task leases lapse too, and their runs commit nothing until they are valid again
		// or lost.
		m.log.Warn("balancing the group", "error", err)
		return nil
	}
	for _, t := range plan.Claimed {
		if err := m.start(ctx, t); err != nil {
			return err
		}
	}
	if m.stopping == "" {
		for _, t := range plan.HandOver {
			if r := m.running[t]; r != nil {
				r.handOver(m.log)
			}
		}
	}
	if len(plan.Claimed) > 0 {
		m.publish(ctx, true)
	}
	return nil
}

// start runs task t, which the member just claimed: from its own latest checkpoint, or
// from the job's origin when it has none since. A task the job's stop already stopped is
// held without a run.
func (m *member) start(ctx context.Context, t string) error {
	lease, ok := m.g.Lease(t)
	if !ok {
		return nil // lost again at once
	}
	k, p, err := parseTask(m.topo, t)
	if err != nil {
		return err
	}
	job := m.topo.Job()
	var in dataflow.Source
	var out dataflow.Sink
	if k > 0 {
		in = m.ex.source(k, p)
	}
	if k < m.topo.SubTopologies()-1 {
		out = m.ex.sink(k+1, p, lease)
	}
	r := newTaskRun(t, m.topo.Task(TaskJobName(job.Name, t), k, p, in, out), lease)
	m.running[t] = r
	if m.stopping != "" {
		if results, err := m.g.Results(ctx, m.stopping); err == nil && results[t].Member != "" {
			r.stopped = true
			close(r.done)
			return nil
		}
	}
	x := &Executor{Config: m.cfg, Host: m.d.Host, Logger: m.log.With("task", t), Savepoints: r.requests, Lease: lease}
	if o := m.origin; o != nil {
		x.Origin = &Origin{Pointer: o.Tasks[t].Pointer, Epoch: o.Tasks[t].Epoch}
	}
	r.start(m.runCtx, x, FromLatestIfAny)
	m.log.Info("running a task", "task", t, "epoch", lease.Record().Epoch)
	return nil
}

// reap looks at the task runs that ended: a task handed over is released to the group, a
// task whose lease was lost is dropped (another member holds it), a finished task keeps
// its lease (its work is done); a task that failed for good fails the member.
func (m *member) reap(ctx context.Context) error {
	for _, t := range slices.Sorted(maps.Keys(m.running)) {
		r := m.running[t]
		err, ended := r.result()
		if !ended {
			continue
		}
		switch {
		case r.stopped, r.cancelled:
		case r.handingOver && err == nil:
			delete(m.running, t)
			if rerr := m.g.Release(ctx, t); rerr != nil {
				m.log.Warn("handing a task over", "task", t, "error", rerr)
			}
		case errors.Is(err, ownership.ErrLost):
			delete(m.running, t)
			m.log.Warn("a task's lease was lost: another runner holds it now", "task", t, "error", err)
		case err == nil:
			if !r.finished {
				r.finished = true
				m.log.Info("task finished", "task", t)
			}
			if !r.marked {
				if merr := m.g.MarkFinished(ctx, t); merr != nil {
					m.log.Warn("marking a finished task", "task", t, "error", merr)
				} else {
					r.marked = true
				}
			}
		case m.runCtx.Err() != nil: // the runner is stopping: its runs were cancelled
		default:
			return fmt.Errorf("task %s of job %q: %w", t, m.topo.Job().Name, err)
		}
	}
	return nil
}

// errJobFinished ends a member's run once every task of the job has finished.
var errJobFinished = errors.New("every task of the job finished")

// finished returns errJobFinished once every task of the job is marked finished
// (cluster.Group.MarkFinished), whether this member runs any or not.
func (m *member) finished(ctx context.Context) error {
	if m.stopping != "" {
		return nil
	}
	for _, r := range m.running {
		if !r.marked {
			return nil
		}
	}
	done, err := m.g.Finished(ctx)
	if err != nil {
		m.log.Warn("reading the job's finished tasks", "error", err)
		return nil
	}
	for _, t := range m.g.Tasks() {
		if !done[t] {
			return nil
		}
	}
	return errJobFinished
}

// stopAll cancels every task run and waits for them to end.
func (m *member) stopAll() {
	for _, r := range m.running {
		if r.cancel != nil {
			r.cancel(nil)
		}
	}
	for _, r := range m.running {
		<-r.done
	}
}

// Package runner runs Flowstate jobs: it loads the configured state backend and
// checkpoint storage plugins, restores a job from a checkpoint when asked, runs it, and
// recovers it when a plugin process or a task fails.
//
// It owns the run's path, which goes one way: Executor.Run checks the job (preflight),
// becomes its owner (runtime/ownership), opens the plugin session (runtime/session)
// through recovery (recovery.go, which decides what each attempt restores), runs attempts
// (attempt.go) and, after a failure, backs off as the restart strategy says (backoff.go)
// and recovers. It also holds the Environment Go API and Launch, the one way every job
// runs. It is the top of the runtime: no package of runtime/ may import it, and it must
// never import a plugin but through plugins/builtin (in tests only).
package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/session"
)

// FromLatest is the --from value that resumes from the newest completed checkpoint.
const FromLatest = "latest"

// FromLatestIfAny is the --from value that resumes from the newest completed checkpoint
// when the job has one, and starts fresh when its storage holds none: the one command a
// supervisor runs for the first start and every restart after a crash.
const FromLatestIfAny = "latest-if-any"

// Executor runs jobs with the plugins a resolved configuration names.
type Executor struct {
	// Config is the resolved configuration (config.Resolve has run).
	Config *config.Config
	// Host starts and restarts the plugins.
	Host *pluginhost.Host
	// Logger receives the runner's log.
	Logger hclog.Logger
	// Savepoints, if set, receives savepoint requests for the running job.
	Savepoints <-chan dataflow.SavepointRequest
	// OnCheckpoint, if set, is called after every completed checkpoint.
	OnCheckpoint func(c *checkpoint.Completed)
	// Stats, if set, accumulates the state access counts of every attempt.
	Stats *dataflow.RunStats
	// AllowNonRestoredState lets a restore drop the state of operators the job no longer
	// has (Flink's --allowNonRestoredState); without it such a restore is refused.
	AllowNonRestoredState bool
	// ControlAddress, if set, is the address of the control endpoint serving this run,
	// recorded with the job's lease so that savepoint and stop find it.
	ControlAddress string
	// Monitor, if set, receives the run's events: its plugins, attempts, restarts,
	// restores and checkpoints (what the control endpoint shows).
	Monitor *monitor.Monitor
	// WaitForLease makes a run whose job another runner holds wait, with a countdown,
	// until that runner's lease expires, and then take the job over; without it such a
	// run fails at once with a *ownership.HeldError.
	WaitForLease bool
	// OnOwned, if set, is called once the run holds its job's leases and has found what it
	// restores, before its first attempt; a run refused or failed before never calls it.
	OnOwned func()
	// Lease, if set, is a lease the caller holds on the job (a task's, in distributed
	// mode): it stands for the lease on the job's record in the checkpoint storage, which
	// the run then does not take; its loss stops the run, and it stays the caller's to
	// release (ownership.Settings.Lease).
	Lease *ownership.Lease
	// Origin, if set, is where a run from FromLatestIfAny starts when the job has no
	// checkpoint of its own taken since the origin (a task of a distributed job restored
	// from a savepoint, runtime/cluster's Origin).
	Origin *Origin
}

// Origin is a checkpoint or savepoint a job was restored from, for the runs after it: a
// run from FromLatestIfAny restores the newest checkpoint of the job taken at a lease
// epoch above Epoch (taken since, by a run started from the origin), else Pointer.
type Origin struct {
	Pointer string
	Epoch   int64
}

// Run executes job. from is "" for a fresh start, FromLatest, FromLatestIfAny, or a
// checkpoint or savepoint pointer the storage resolves. Mistakes that restarting cannot
// fix (a missing input, an unwritable output, an incompatible checkpoint) fail at once;
// other failures go through the restart strategy, each attempt restoring what recovery
// decides. The run holds the job's leases (an ownership.Owner) throughout; losing one stops it
// before it commits anything more; a job another runner holds fails at once, or with
// WaitForLease is waited for.
func (x *Executor) Run(ctx context.Context, job *dataflow.Job, from string) (err error) {
	if x.Logger == nil {
		x.Logger = hclog.NewNullLogger()
	}
	log := x.Logger
	cfg := x.Config
	if err := errors.Join(config.CheckJobName(job.Name), job.Validate()); err != nil {
		return fmt.Errorf("job %q: %w", job.Name, err)
	}
	if err := job.Preflight(ctx); err != nil {
		return err
	}
	// suspend is the caller's context: cancelled without ErrJobCancelled, it stops the
	// runner and suspends the job (its checkpoints stay), which the error then says.
	suspend := ctx
	// The output lease now, the storage's when the session creates its storage access.
	owner, ctx, err := ownership.Own(ctx, x.ownerSettings(job))
	if err != nil {
		return err
	}
	defer func() { err = owner.Release(err) }()
	defer func() { x.Monitor.SetState(endState(context.Cause(ctx), err)) }()
	policy := restart.New(cfg.Restart, restart.System, nil)
	// Start: the plugins, the storage access, the checkpoint to restore. A plugin that dies
	// while it starts, handshakes, takes its options or serves the restore point is one
	// failure for the restart strategy, as after a crash mid-run.
	sess := session.New(session.Options{Config: cfg, Host: x.Host, Owner: owner, Job: job.Name, Logger: log, OnRestart: x.Monitor.PluginRestarted})
	rec := &recovery{s: sess, cfg: cfg, mon: x.Monitor, job: job, shape: job.Shape(), log: log, origin: x.Origin,
		allowNonRestored: x.AllowNonRestoredState || cfg.Recovery.IgnoreUnclaimedState}
	if from == "" {
		from = cfg.Recovery.Path
	}
	defer func() {
		if err != nil && suspend.Err() != nil && !errors.Is(context.Cause(suspend), ErrJobCancelled) {
			err = fmt.Errorf("job %q suspended: %s: %w", job.Name, rec.leftToResume(), err)
		}
	}()
	// Every turn readies an attempt (the first turns start the run, the later ones recover
	// it after a failure) and runs it. A failure of either counts against the restart
	// strategy; a start that another runner's lease refused waits for it first, when the
	// run waits for leases.
	for started := false; ; {
		restore, err := rec.next(ctx, from)
		if err == nil {
			if !started {
				started = true
				if x.OnOwned != nil {
					x.OnOwned()
				}
				defer x.disposeOnCancel(ctx, rec.store) // once: the store of the start that succeeded
				x.Monitor.JobStarted(x.jobInfo(job, sess))
			}
			rec.restored(restore)
			x.Monitor.SetState(monitor.JobRunning)
			if err = x.attempt(ctx, job, sess, owner, rec.store, restore); err == nil || dataflow.IsStopped(err) {
				return nil
			}
			if restore != nil && permanent(err) { // name what the failed attempt restored
				err = fmt.Errorf("the attempt from %s: %w", rec.describe(restore), err)
			}
		} else if !started {
			if waited, werr := owner.Wait(ctx, err); werr != nil {
				return werr
			} else if waited {
				continue
			}
		}
		if err := x.backOff(ctx, policy, job, err); err != nil {
			return err
		}
	}
}

// endState is the state a run that returned err ends in, for the monitor; cause is why
// the run's context ended (nil while it has not).
func endState(cause, err error) string {
	switch {
	case err == nil:
		return monitor.JobFinished
	case errors.Is(cause, ErrJobCancelled), dataflow.IsStopped(err):
		return monitor.JobCanceled
	case cause != nil:
		return monitor.JobSuspended
	}
	return monitor.JobFailed
}

// ownerSettings are the settings of the owner of job's run.
func (x *Executor) ownerSettings(job *dataflow.Job) ownership.Settings {
	ttl := x.Config.Job.LeaseTimeout
	if ttl <= 0 {
		ttl = config.DefaultLeaseTimeout
	}
	return ownership.Settings{Job: job.Name, Control: x.ControlAddress, Output: job.OutputDir(),
		TTL: ttl, TimeoutKey: config.KeyLeaseTimeout, Wait: x.WaitForLease, Logger: x.Logger, Lease: x.Lease}
}

// jobInfo describes job and the plugins of its session to the monitor.
func (x *Executor) jobInfo(job *dataflow.Job, sess *session.Session) monitor.JobInfo {
	cfg := x.Config
	info := monitor.JobInfo{
		Type: job.Type, ConfigFile: cfg.File, MaxParallelism: job.MaxParallelism,
		Checkpointing: monitor.CheckpointSettings{
			Interval: cfg.Checkpointing.Interval, Timeout: cfg.Checkpointing.Timeout,
			TolerableFailed: cfg.Checkpointing.TolerableFailed, NumRetained: cfg.Checkpointing.NumRetained,
			Incremental: cfg.Checkpointing.Incremental, StateBackend: cfg.StateBackend, CheckpointStorage: cfg.CheckpointStorage,
			Mode: cfg.Checkpointing.Mode, MinPause: cfg.Checkpointing.MinPause, MaxConcurrent: cfg.Checkpointing.MaxConcurrent,
			Retention: cfg.Checkpointing.Retention,
		},
	}
	for _, op := range job.Shape().Operators {
		if op.ID != dataflow.SinkID {
			info.Tasks = append(info.Tasks, monitor.TaskInfo{ID: op.ID, Name: op.ID, Parallelism: op.Parallelism})
		}
	}
	plugins := sess.Plugins() // the backend's, then the storage's unless one plugin serves both
	for i, in := range plugins {
		roles := []string{"state backend"}
		switch {
		case len(plugins) == 1:
			roles = append(roles, "checkpoint storage")
		case i == 1:
			roles = []string{"checkpoint storage"}
		}
		hi := in.Info()
		info.Plugins = append(info.Plugins, monitor.PluginInfo{Name: in.Name(), Roles: roles, Version: hi.Version, Pid: in.Pid(), Path: hi.Path})
	}
	return info
}

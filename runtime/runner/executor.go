// Package runner runs Flowstate jobs: it loads the configured state backend and
// checkpoint storage plugins, restores a job from a checkpoint when asked, runs it, and
// recovers it when a plugin process or a task fails.
package runner

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/lease"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/progress"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
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
	// run fails at once with a *lease.HeldError.
	WaitForLease bool
	// OnOwned, if set, is called once the run holds its job's leases and has found what it
	// restores, before its first attempt; a run refused or failed before never calls it.
	OnOwned func()

	owner *ownership // the leases of the running job (ownership.go); one Run at a time
}

// plugins are the instances a run uses; backend and storage may be the same instance.
type plugins struct {
	backend, storage *pluginhost.Instance
}

// Run executes job. from is "" for a fresh start, FromLatest, FromLatestIfAny, or a
// checkpoint or savepoint pointer the storage resolves. Mistakes that restarting cannot
// fix (a missing input, an unwritable output, an incompatible checkpoint) fail at once;
// other failures go through the restart strategy, each attempt restoring what recovery
// decides. The run holds the job's leases (ownership.go) throughout; losing one stops it
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
	ctx, released, err := x.own(ctx, job) // the output lease now, the storage's in x.access
	if err != nil {
		return err
	}
	defer released(&err)
	defer func() { x.Monitor.SetState(endState(ctx, err)) }()
	policy := restart.New(cfg.Restart, restart.System, nil)
	// Start: the plugins, the storage access, the checkpoint to restore. A plugin that dies
	// while it starts, handshakes, takes its options or serves the restore point is one
	// failure for the restart strategy, as after a crash mid-run.
	rec := &recovery{x: x, job: job, shape: job.Shape(), log: log,
		allowNonRestored: x.AllowNonRestoredState || cfg.Recovery.IgnoreUnclaimedState}
	if from == "" {
		from = cfg.Recovery.Path
	}
	defer func() {
		if err != nil && suspend.Err() != nil && !errors.Is(context.Cause(suspend), ErrJobCancelled) {
			err = fmt.Errorf("job %q suspended: %s: %w", job.Name, rec.leftToResume(), err)
		}
	}()
	var restore *checkpoint.Metadata
	for {
		var err error
		if rec.pl, err = x.open(ctx); err == nil {
			restore, err = rec.start(ctx, from)
		}
		if err == nil {
			break
		}
		if waited, werr := x.waitOut(ctx, err); werr != nil {
			return werr
		} else if waited {
			continue
		}
		if err := x.backOff(ctx, policy, job, err); err != nil {
			return err
		}
	}
	if x.OnOwned != nil {
		x.OnOwned()
	}
	defer x.disposeOnCancel(ctx, rec.store)
	x.Monitor.JobStarted(x.jobInfo(job, rec.pl))
	rec.restored(restore)
	for {
		x.Monitor.SetState(monitor.JobRunning)
		err := x.attempt(ctx, job, rec.pl, rec.store, restore)
		if err == nil || dataflow.IsStopped(err) {
			return nil
		}
		if restore != nil && permanent(err) { // name what the failed attempt restored
			err = fmt.Errorf("the attempt from %s: %w", rec.describe(restore), err)
		}
		// Recover, counting every failure (of an attempt, or of the recovery itself: a
		// plugin that dies again while it is restarted) against the restart strategy.
		for {
			if err := x.backOff(ctx, policy, job, err); err != nil {
				return err
			}
			if restore, err = rec.afterFailure(ctx); err == nil {
				rec.restored(restore)
				break
			}
		}
	}
}

// backOff decides what follows failure err: an error to end the run with (the job was
// cancelled, err is permanent, or the restart strategy gives up), or nil after the
// strategy's delay.
func (x *Executor) backOff(ctx context.Context, policy restart.Policy, job *dataflow.Job, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if permanent(err) {
		return fmt.Errorf("job %q: %w", job.Name, err)
	}
	d := policy.Failed()
	if !d.Restart {
		return fmt.Errorf("job %q failed and is not restarted (%s): %w", job.Name, d.Reason, err)
	}
	x.Logger.Warn("job failed; recovering", "error", err, "delay", d.Delay, "restart-strategy", policy.String())
	x.Monitor.Restarted()
	select {
	case <-time.After(d.Delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endState is the state a run that returned err ends in, for the monitor.
func endState(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return monitor.JobFinished
	case errors.Is(context.Cause(ctx), ErrJobCancelled), dataflow.IsStopped(err):
		return monitor.JobCanceled
	case ctx.Err() != nil:
		return monitor.JobSuspended
	}
	return monitor.JobFailed
}

// jobInfo describes job and its plugins to the monitor.
func (x *Executor) jobInfo(job *dataflow.Job, pl *plugins) monitor.JobInfo {
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
	for _, in := range []*pluginhost.Instance{pl.backend, pl.storage} {
		roles := []string{"state backend"}
		switch {
		case pl.backend == pl.storage:
			roles = append(roles, "checkpoint storage")
		case in == pl.storage:
			roles = []string{"checkpoint storage"}
		}
		hi := in.Info()
		info.Plugins = append(info.Plugins, monitor.PluginInfo{Name: in.Name(), Roles: roles, Version: hi.Version, Pid: in.Pid(), Path: hi.Path})
		if pl.backend == pl.storage {
			break
		}
	}
	return info
}

// permanent reports whether err is one that restarting cannot fix: marked so, an
// incompatible checkpoint, or a job another runner holds.
func permanent(err error) bool {
	return restart.IsPermanent(err) || errors.Is(err, checkpoint.ErrIncompatible) || errors.As(err, new(*lease.HeldError))
}

// attempt runs one attempt of job from restore (nil: fresh).
func (x *Executor) attempt(ctx context.Context, job *dataflow.Job, pl *plugins, store *checkpoint.Store, restore *checkpoint.Metadata) error {
	cfg := x.Config
	backend, _ := pl.backend.StateBackend()
	stats := &dataflow.RunStats{}
	attemptCtx, cancel := context.WithCancelCause(ctx)
	stopWatch := watchPlugins(attemptCtx, cancel, pl)
	err := dataflow.Run(attemptCtx, job, dataflow.Env{
		Backend: backend, BackendName: cfg.StateBackend, Checkpoints: store, Restore: restore,
		Interval: cfg.Checkpointing.Interval, Timeout: cfg.Checkpointing.Timeout,
		TolerableFailures: cfg.Checkpointing.TolerableFailed, Savepoints: x.Savepoints,
		MinPause: cfg.Checkpointing.MinPause, MaxConcurrent: cfg.Checkpointing.MaxConcurrent,
		AtLeastOnce:         cfg.Checkpointing.Mode == config.ModeAtLeastOnce,
		FullFirstCheckpoint: fullFirstCheckpoint(cfg, store, restore),
		Logger:              x.Logger, OnCheckpoint: x.OnCheckpoint, Stats: stats,
		CancellationTimeout:   cfg.Restart.CancellationTimeout,
		OnCancellationTimeout: func(n int) { x.killStuck(pl, n, cfg.Restart.CancellationTimeout) },
		Fence:                 x.owner.check,
		Events:                x.Monitor.Events(),
		RestoreProgress: func(total int64) dataflow.Progress {
			return progress.New(progress.Options{Title: "restore", Total: total, Logger: x.Logger})
		},
	})
	stopWatch()
	discardDeferred(ctx, store, x.Logger)
	if cause := context.Cause(attemptCtx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	cancel(nil)
	x.addStats(stats)
	return err
}

// killStuck kills the plugin process that keeps a cancelled attempt from ending: the state
// backend's after one task.cancellation.timeout, the checkpoint storage's after a second.
// Every call still waiting on it then fails at once, and recovery starts it again. A plugin
// served in-process cannot be killed.
func (x *Executor) killStuck(pl *plugins, n int, timeout time.Duration) {
	in := pl.backend
	if n == 2 {
		in = pl.storage
	}
	if n > 2 || in.Pid() == 0 || !in.Alive() {
		return
	}
	x.Logger.Warn("the job's attempt has not ended "+(time.Duration(n)*timeout).String()+" after it was cancelled (task.cancellation.timeout): killing the plugin that holds it up",
		"plugin", in.Name(), "pid", in.Pid())
	in.Kill()
}

func (x *Executor) addStats(s *dataflow.RunStats) {
	if x.Stats == nil {
		return
	}
	x.Stats.Add(s)
}

// watchPlugins cancels the attempt when a plugin process exits.
func watchPlugins(ctx context.Context, cancel context.CancelCauseFunc, pl *plugins) (stop func()) {
	done := make(chan struct{})
	for _, in := range []*pluginhost.Instance{pl.backend, pl.storage} {
		go func() {
			select {
			case <-in.Done():
				cancel(fmt.Errorf("plugin %s exited: %w", in.Name(), in.ExitError()))
			case <-done:
			case <-ctx.Done():
			}
		}()
	}
	return func() { close(done) }
}

// open starts the backend and storage plugins (recovery configures them), restarting any
// whose process died since an earlier call. A plugin that cannot be what the configuration
// asks (no such plugin, a binary that fails its checks, not a plugin, the wrong kind) is a
// permanent error; one that died on the way is not: starting it again may work.
func (x *Executor) open(ctx context.Context) (*plugins, error) {
	cfg := x.Config
	// The storage starts beside the backend: a start is mostly a process coming up, which
	// the other's need not wait for.
	var storage *pluginhost.Instance
	var storageErr error
	started := make(chan struct{})
	go func() {
		defer close(started)
		if cfg.CheckpointStorage != cfg.StateBackend {
			storage, storageErr = x.openPlugin(ctx, cfg.CheckpointStorage)
		}
	}()
	backend, err := x.openPlugin(ctx, cfg.StateBackend)
	<-started
	if err != nil {
		return nil, fmt.Errorf("state backend %q (state.backend.type): %w", cfg.StateBackend, err)
	}
	if _, ok := backend.StateBackend(); !ok {
		return nil, restart.Permanent(fmt.Errorf("state.backend.type: plugin %q is not a state backend (it serves %v)", cfg.StateBackend, backend.Info().Kinds))
	}
	pl := &plugins{backend: backend, storage: backend}
	if cfg.CheckpointStorage != cfg.StateBackend {
		if pl.storage, err = storage, storageErr; err != nil {
			return nil, fmt.Errorf("checkpoint storage %q (execution.checkpointing.storage): %w", cfg.CheckpointStorage, err)
		}
	}
	if _, ok := pl.storage.CheckpointStorage(); !ok {
		return nil, restart.Permanent(fmt.Errorf("execution.checkpointing.storage: plugin %q is not a checkpoint storage (it serves %v)", cfg.CheckpointStorage, pl.storage.Info().Kinds))
	}
	return pl, nil
}

// openPlugin returns plugin name's running instance, starting it, or starting it again if
// its process died. Only a start-up the plugin did not survive (host.ErrExited) is worth
// another try; any other start-up error is permanent.
func (x *Executor) openPlugin(ctx context.Context, name string) (*pluginhost.Instance, error) {
	in, err := x.Host.Open(ctx, name)
	if err == nil && !in.Alive() {
		err = in.Restart(ctx)
	}
	if err != nil && !errors.Is(err, host.ErrExited) && ctx.Err() == nil {
		return nil, restart.Permanent(err)
	}
	return in, err
}

// options returns the options of plugin in of pl: a plugin serving both roles gets both
// sets.
func (x *Executor) options(pl *plugins, in *pluginhost.Instance) sdk.Options {
	cfg := x.Config
	switch {
	case pl.backend == pl.storage:
		opts := sdk.Options{}
		for k, v := range cfg.StorageOptions {
			opts[k] = v
		}
		for k, v := range cfg.BackendOptions {
			opts[k] = v
		}
		return opts
	case in == pl.backend:
		return cfg.BackendOptions
	}
	return cfg.StorageOptions
}

func (x *Executor) configureOne(ctx context.Context, in *pluginhost.Instance, opts sdk.Options) error {
	err := in.Configure(ctx, opts)
	if err == nil {
		return nil
	}
	var oe *sdk.OptionError
	if errors.As(err, &oe) {
		key := x.Config.OptionKey(in.Name(), oe.Option)
		return restart.Permanent(fmt.Errorf("%s: plugin %s refused option %q (value %q): %w", x.Config.Locate(key), in.Name(), oe.Option, oe.Value, oe.Err))
	}
	return fmt.Errorf("configure plugin %s: %w", in.Name(), err)
}

// access creates the job's storage access and its base locations.
func (x *Executor) access(ctx context.Context, in *pluginhost.Instance, jobID string) (sdk.CheckpointStorageAccess, error) {
	storage, _ := in.CheckpointStorage()
	access, err := storage.CreateCheckpointStorage(ctx, jobID)
	if err != nil {
		err = fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), jobID, err)
		if errors.Is(err, sdk.ErrInvalidArgument) { // the storage refused the job's id
			err = restart.Permanent(err)
		}
		return nil, err
	}
	if err := x.owner.attach(ctx, in, x.Config.Checkpointing.Dir, access); err != nil { // ownership.go
		return nil, err
	}
	access = x.owner.fenced(access) // fence.go
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		return nil, fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), jobID, err)
	}
	return access, nil
}

// Package runtime runs Flowstate jobs: it loads the configured state backend and
// checkpoint storage plugins, restores a job from a checkpoint when asked, runs it, and
// recovers it when a plugin process or a task fails.
package runtime

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// FromLatest is the --from value that resumes from the newest completed checkpoint.
const FromLatest = "latest"

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
	// ControlAddress, if set, is the address of the control endpoint serving this run,
	// recorded with the job's lease so that savepoint and stop find it.
	ControlAddress string

	owner *ownership // the leases of the running job (ownership.go); one Run at a time
}

// plugins are the instances a run uses; backend and storage may be the same instance.
type plugins struct {
	backend, storage *pluginhost.Instance
}

// Run executes job. from is "" for a fresh start, FromLatest, or a checkpoint or savepoint
// pointer the storage resolves.
func (x *Executor) Run(ctx context.Context, job *dataflow.Job, from string) (err error) {
	if x.Logger == nil {
		x.Logger = hclog.NewNullLogger()
	}
	log := x.Logger
	cfg := x.Config
	pl, err := x.open(ctx)
	if err != nil {
		return err
	}
	ctx, released, err := x.own(ctx, job) // ownership.go: the job's leases, lost -> ctx cancelled
	if err != nil {
		return err
	}
	defer released(&err)
	storage, _ := pl.storage.CheckpointStorage()
	access, err := x.access(ctx, pl.storage, job.Name)
	if err != nil {
		return err
	}
	store := checkpoint.NewStore(access, cfg.Checkpointing.NumRetained)
	restore, floor, err := x.restorePoint(ctx, storage, store, job.Name, from)
	if err != nil {
		return err
	}
	if n, err := cleanSharedLeftovers(ctx, store.Access(), restore); err != nil {
		log.Warn("cleaning up the shared state of checkpoints that never completed", "error", err)
	} else if n > 0 {
		log.Info("deleted the shared state of checkpoints that never completed", "streams", n)
	}
	failures := 0
	for {
		backend, _ := pl.backend.StateBackend()
		stats := &dataflow.RunStats{}
		attemptCtx, cancel := context.WithCancelCause(ctx)
		stopWatch := watchPlugins(attemptCtx, cancel, pl)
		err := dataflow.Run(attemptCtx, job, dataflow.Env{
			Backend: backend, BackendName: cfg.StateBackend, Checkpoints: store, Restore: restore,
			Interval: cfg.Checkpointing.Interval, Timeout: cfg.Checkpointing.Timeout,
			TolerableFailures: cfg.Checkpointing.TolerableFailed, Savepoints: x.Savepoints,
			Logger: log, OnCheckpoint: x.OnCheckpoint, Stats: stats,
			CancellationTimeout:   cfg.Restart.CancellationTimeout,
			OnCancellationTimeout: func(n int) { x.killStuck(pl, n, cfg.Restart.CancellationTimeout) },
			Fence:                 x.owner.check,
		})
		stopWatch()
		discardDeferred(ctx, store, log)
		if cause := context.Cause(attemptCtx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		cancel(nil)
		x.addStats(stats)
		if err == nil || dataflow.IsStopped(err) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if stats.Checkpoints > 0 {
			failures = 0
		}
		failures++
		if cfg.Restart.Type == "none" || failures > cfg.Restart.Attempts {
			return fmt.Errorf("job %q failed %d times in a row (restart-strategy.fixed-delay.attempts is %d): %w", job.Name, failures, cfg.Restart.Attempts, err)
		}
		log.Warn("job failed; recovering", "error", err, "failure", failures, "of", cfg.Restart.Attempts)
		select {
		case <-time.After(cfg.Restart.Delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		if restore, err = x.recover(ctx, pl, store, job.Name, floor); err != nil {
			return err
		}
	}
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

// open starts and configures the backend and storage plugins.
func (x *Executor) open(ctx context.Context) (*plugins, error) {
	cfg := x.Config
	backend, err := x.Host.Open(ctx, cfg.StateBackend)
	if err != nil {
		return nil, fmt.Errorf("state backend %q (state.backend.type): %w", cfg.StateBackend, err)
	}
	if _, ok := backend.StateBackend(); !ok {
		return nil, fmt.Errorf("state.backend.type: plugin %q is not a state backend (it serves %v)", cfg.StateBackend, backend.Info().Kinds)
	}
	pl := &plugins{backend: backend, storage: backend}
	if cfg.CheckpointStorage != cfg.StateBackend {
		if pl.storage, err = x.Host.Open(ctx, cfg.CheckpointStorage); err != nil {
			return nil, fmt.Errorf("checkpoint storage %q (execution.checkpointing.storage): %w", cfg.CheckpointStorage, err)
		}
	}
	if _, ok := pl.storage.CheckpointStorage(); !ok {
		return nil, fmt.Errorf("execution.checkpointing.storage: plugin %q is not a checkpoint storage (it serves %v)", cfg.CheckpointStorage, pl.storage.Info().Kinds)
	}
	if err := x.configure(ctx, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// configure passes each plugin its options; a plugin serving both roles gets both sets.
func (x *Executor) configure(ctx context.Context, pl *plugins) error {
	cfg := x.Config
	if pl.backend == pl.storage {
		opts := sdk.Options{}
		for k, v := range cfg.StorageOptions {
			opts[k] = v
		}
		for k, v := range cfg.BackendOptions {
			opts[k] = v
		}
		return x.configureOne(ctx, pl.backend, opts)
	}
	if err := x.configureOne(ctx, pl.backend, cfg.BackendOptions); err != nil {
		return err
	}
	return x.configureOne(ctx, pl.storage, cfg.StorageOptions)
}

func (x *Executor) configureOne(ctx context.Context, in *pluginhost.Instance, opts sdk.Options) error {
	err := in.Configure(ctx, opts)
	if err == nil {
		return nil
	}
	var oe *sdk.OptionError
	if errors.As(err, &oe) {
		key := x.Config.OptionKey(in.Name(), oe.Option)
		where := x.Config.File
		if line := x.Config.Line(key); line > 0 {
			where = fmt.Sprintf("%s:%d", where, line)
		}
		return fmt.Errorf("%s: %s: plugin %s refused option %q (value %q): %w", where, key, in.Name(), oe.Option, oe.Value, oe.Err)
	}
	return fmt.Errorf("configure plugin %s: %w", in.Name(), err)
}

// access creates the job's storage access and its base locations.
func (x *Executor) access(ctx context.Context, in *pluginhost.Instance, jobID string) (sdk.CheckpointStorageAccess, error) {
	storage, _ := in.CheckpointStorage()
	access, err := storage.CreateCheckpointStorage(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), jobID, err)
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

// restorePoint finds the checkpoint a run starts from and registers it in store. floor is
// the newest checkpoint id in the storage before the run (see disposeUnconfirmed).
func (x *Executor) restorePoint(ctx context.Context, storage sdk.CheckpointStorage, store *checkpoint.Store, jobID, from string) (restore *checkpoint.Metadata, floor int64, err error) {
	access := store.Access()
	existing, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		return nil, floor, fmt.Errorf("list checkpoints of job %q: %w", jobID, err)
	}
	for _, c := range existing {
		store.ObserveID(c.CheckpointID)
		floor = max(floor, c.CheckpointID)
	}
	switch from {
	case "":
		return nil, floor, nil
	case FromLatest:
		c, err := LatestCheckpoint(ctx, access, existing, x.Logger)
		if err != nil {
			return nil, floor, fmt.Errorf("--from latest: job %q: %w", jobID, err)
		}
		x.Logger.Info("restoring from the latest checkpoint", "id", c.Metadata.CheckpointID, "pointer", c.Location.ExternalPointer)
		store.ObserveID(c.Metadata.CheckpointID)
		return c.Metadata, floor, store.AddAll(ctx, append(earlierCheckpoints(ctx, access, existing, c, x.Logger), c))
	default:
		loc, err := storage.ResolveCheckpoint(ctx, from)
		if err != nil {
			return nil, floor, fmt.Errorf("--from %s: %w", from, err)
		}
		m, err := checkpoint.Load(ctx, access, loc)
		if err != nil {
			return nil, floor, fmt.Errorf("--from %s: %w", from, err)
		}
		x.Logger.Info("restoring", "pointer", loc.ExternalPointer, "id", m.CheckpointID, "savepoint", m.Savepoint)
		store.ObserveID(m.CheckpointID)
		return m, floor, store.Add(ctx, &checkpoint.Completed{Location: loc, Metadata: m, Owned: false})
	}
}

// LatestCheckpoint returns the newest of the completed checkpoints whose metadata and
// state streams read back intact (sizes and CRC-32C checked), warning about each damaged
// one it skips. It reads the candidate's state once; a restore reads it again.
func LatestCheckpoint(ctx context.Context, access sdk.CheckpointStorageAccess, list []sdk.CompletedCheckpointStorageLocation, log hclog.Logger) (*checkpoint.Completed, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	var skipped []string
	for i := len(list) - 1; i >= 0; i-- {
		m, err := checkpoint.Load(ctx, access, list[i])
		if err == nil {
			err = checkpoint.Verify(ctx, access, m)
			if err != nil && !errors.Is(err, sdk.ErrCorrupt) && !errors.Is(err, sdk.ErrNotFound) {
				return nil, fmt.Errorf("verify checkpoint %s: %w", list[i].ExternalPointer, err)
			}
		}
		if err != nil {
			log.Warn("skipping a damaged checkpoint; trying the previous one", "pointer", list[i].ExternalPointer, "error", err)
			skipped = append(skipped, list[i].ExternalPointer)
			continue
		}
		return &checkpoint.Completed{Location: list[i], Metadata: m, Owned: true}, nil
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("no intact completed checkpoint: damaged: %v", skipped)
	}
	return nil, errors.New("no completed checkpoint found")
}

// recover brings dead plugins back and returns the checkpoint to restore (nil: start
// over). floor is the newest checkpoint id in the storage before the run.
func (x *Executor) recover(ctx context.Context, pl *plugins, store *checkpoint.Store, jobID string, floor int64) (*checkpoint.Metadata, error) {
	log := x.Logger
	restarted := map[*pluginhost.Instance]bool{}
	for _, in := range []*pluginhost.Instance{pl.backend, pl.storage} {
		if in.Alive() || restarted[in] {
			continue
		}
		log.Warn("restarting plugin", "plugin", in.Name())
		if err := in.Restart(ctx); err != nil {
			return nil, fmt.Errorf("restart plugin %s: %w", in.Name(), err)
		}
		restarted[in] = true
	}
	if len(restarted) > 0 {
		if err := x.configure(ctx, pl); err != nil {
			return nil, err
		}
	}
	if restarted[pl.storage] {
		access, err := x.access(ctx, pl.storage, jobID)
		if err != nil {
			return nil, err
		}
		store.SetAccess(access)
		if latest := store.Latest(); latest != nil {
			storage, _ := pl.storage.CheckpointStorage()
			if _, err := storage.ResolveCheckpoint(ctx, latest.Location.ExternalPointer); err != nil {
				lost := fmt.Errorf("checkpoint storage %s restarted and checkpoint %d (%s) is gone with it: %s keeps checkpoints in its process memory unless it has a directory, so they die with the process: %w",
					pl.storage.Name(), latest.Metadata.CheckpointID, latest.Location.ExternalPointer, pl.storage.Name(), err)
				if !x.Config.Restart.StartOverOnCheckpointLoss {
					return nil, fmt.Errorf("%w; stopping rather than pretending to restore (set execution.recovery.start-over-on-checkpoint-loss: true to start the job over, or use fsstorage)", lost)
				}
				log.Warn("starting the job over from the beginning", "reason", lost)
				store.Forget()
				return nil, nil
			}
		}
	}
	x.disposeUnconfirmed(ctx, store, floor)
	if latest := store.Latest(); latest != nil {
		log.Info("restoring from checkpoint", "id", latest.Metadata.CheckpointID, "pointer", latest.Location.ExternalPointer)
		return latest.Metadata, nil
	}
	log.Info("no completed checkpoint yet: starting over")
	return nil, nil
}

// disposeUnconfirmed deletes the checkpoints of this run that completed in the storage but
// that the runner never confirmed (the storage failed or died while answering the metadata
// publication). The restore goes back past them and discards their sink transactions, so
// a later --from latest must not find them. Checkpoints up to floor predate the run.
func (x *Executor) disposeUnconfirmed(ctx context.Context, store *checkpoint.Store, floor int64) {
	newest := floor
	if latest := store.Latest(); latest != nil {
		newest = max(newest, latest.Metadata.CheckpointID)
	}
	access := store.Access()
	list, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		x.Logger.Warn("listing checkpoints to dispose of unconfirmed ones", "error", err)
		return
	}
	for _, c := range list {
		if c.CheckpointID <= newest {
			continue
		}
		x.Logger.Warn("disposing of a checkpoint the runner never confirmed", "id", c.CheckpointID, "pointer", c.ExternalPointer)
		if err := access.DisposeCheckpoint(ctx, c); err != nil {
			x.Logger.Warn("disposing of an unconfirmed checkpoint", "id", c.CheckpointID, "error", err)
		}
	}
}

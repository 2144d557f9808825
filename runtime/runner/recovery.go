package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/config/explain"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/session"
	"github.com/flowstate/flowstate/sdk"
)

// recovery decides what every attempt of a run starts from. It is the one place that
// resolves and checks checkpoints, keeps the run's checkpoint store on the storage
// access of the session's current storage process, and moves aside the output committed
// after the checkpoint an attempt restores, so that nothing is committed twice. It
// receives the run's plugin session, which brings the plugins back, and never calls
// back into the executor. Every call it makes into a plugin has a deadline
// (session.Session.CallTimeout).
type recovery struct {
	s     *session.Session
	cfg   *config.Config
	mon   *monitor.Monitor
	job   *dataflow.Job
	shape checkpoint.JobShape
	store *checkpoint.Store
	log   hclog.Logger
	// floor is the newest checkpoint id in the storage before the run started: newer ones
	// are the run's own (see disposeUnconfirmed). listed says the storage was listed.
	floor  int64
	listed bool
	// allowNonRestored lets a restore drop the state of operators the job no longer has.
	allowNonRestored bool
	// unchecked says the store is on a storage access of a restarted storage process, and
	// the latest checkpoint it retains is not yet known to have survived the restart.
	unchecked bool
}

// call runs f with a context bounded by the session's CallTimeout.
func (r *recovery) call(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, r.s.CallTimeout())
	defer cancel()
	return f(ctx)
}

// start opens the session's plugins and the job's store and finds the checkpoint the
// run's first attempt restores: none for from "", the newest intact one of the job for FromLatest (and
// for FromLatestIfAny, unless the job has no completed checkpoint: then none), or
// the checkpoint or savepoint a pointer resolves to. It registers it (and, for FromLatest,
// the job's earlier checkpoints) with the store, checks it against the job and rewinds the
// output to it. A failed start may be tried again.
func (r *recovery) start(ctx context.Context, from string) (*checkpoint.Metadata, error) {
	if err := r.s.Open(ctx); err != nil {
		return nil, err
	}
	// A new store for every start: nothing is retained yet.
	access := r.s.Access()
	r.store = checkpoint.NewStore(access, r.cfg.Checkpointing.NumRetained)
	r.store.OnDispose = r.mon.CheckpointDiscarded
	r.floor = 0
	var existing []sdk.CompletedCheckpointStorageLocation
	err := r.call(ctx, func(ctx context.Context) (err error) {
		existing, err = access.ListCompletedCheckpoints(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of job %q: %w", r.job.Name, err)
	}
	for _, c := range existing {
		r.store.ObserveID(c.CheckpointID)
		r.floor = max(r.floor, c.CheckpointID)
	}
	r.listed = true
	if from == FromLatestIfAny {
		if from = FromLatest; len(existing) == 0 {
			r.log.Info("--from latest-if-any: the job has no completed checkpoint yet: starting fresh", "job", r.job.Name)
			from = ""
		}
	}
	var restore *checkpoint.Completed
	switch from {
	case "":
	case FromLatest:
		c, err := r.latest(ctx, existing)
		if errors.Is(err, errNoCheckpoint) { // the storage answered: starting again finds none either
			hint := noCheckpointHint(r.cfg)
			if err != errNoCheckpoint { // some are there, damaged
				hint = "restore a savepoint or another checkpoint with --from POINTER, or run without --from to start fresh"
			}
			return nil, restart.Permanent(fmt.Errorf("--from latest: %w in checkpoint storage %s; %s", err, r.storageText(), hint))
		}
		if err != nil {
			return nil, fmt.Errorf("--from latest: job %q: %w", r.job.Name, err)
		}
		r.log.Info("restoring from the latest checkpoint", "id", c.Metadata.CheckpointID, "pointer", c.Location.ExternalPointer)
		restore = c
	default:
		c, err := r.resolve(ctx, from)
		if err != nil {
			err = fmt.Errorf("--from %s: %w", from, err)
			if refused(err) { // the storage answered: starting again will not change it
				err = restart.Permanent(err)
			}
			return nil, err
		}
		r.log.Info("restoring", "pointer", c.Location.ExternalPointer, "id", c.Metadata.CheckpointID, "savepoint", c.Metadata.Savepoint, "claim-mode", r.cfg.Recovery.ClaimMode)
		restore = c
	}
	m, err := r.prepare(ctx, restore)
	if err != nil {
		return nil, err
	}
	if restore != nil {
		retained := []*checkpoint.Completed{restore}
		if from == FromLatest {
			retained = append(r.earlier(ctx, existing, restore), restore)
		}
		if err := r.store.AddAll(ctx, retained); err != nil {
			r.log.Warn("retention", "error", err)
		}
	}
	if n, err := cleanSharedLeftovers(ctx, access, m); err != nil {
		r.log.Warn("cleaning up the shared state of checkpoints that never completed", "error", err)
	} else if n > 0 {
		r.log.Info("deleted the shared state of checkpoints that never completed", "streams", n)
	}
	return m, nil
}

// leftToResume says what a run stopped now (the runner stopped by a signal, the job
// suspended) leaves for --from latest to resume.
func (r *recovery) leftToResume() string {
	cfg := r.cfg
	if d := explain.Config(cfg).Durable; d != nil && !*d {
		return fmt.Sprintf("its checkpoints were in the memory of %s (%s is not set) and are gone with it: nothing is left for --from latest",
			cfg.CheckpointStorage, config.KeyCheckpointDir)
	}
	if r.store != nil {
		if c := r.store.Latest(); c != nil && !c.Metadata.Savepoint {
			return fmt.Sprintf("its checkpoints stay for --from latest (the newest: checkpoint %d, %s)", c.Metadata.CheckpointID, c.Location.ExternalPointer)
		}
	}
	switch {
	case !r.listed:
		return "it stopped before it read its checkpoints, which stay as they were"
	case r.floor > 0:
		return fmt.Sprintf("this run completed no checkpoint: --from latest resumes from what an earlier run left (checkpoint %d)", r.floor)
	}
	return "the job has no completed checkpoint, so --from latest has nothing to resume: run it again without --from"
}

// afterFailure brings back the plugins a failure took down (session.Session.Ensure), moves
// the store to a new storage access if the storage plugin restarted, and returns the
// checkpoint the next attempt restores (nil: start over). An error that restarting cannot
// fix is restart.Permanent; any other error is one more failure for the restart strategy.
func (r *recovery) afterFailure(ctx context.Context) (*checkpoint.Metadata, error) {
	renewed, err := r.s.Ensure(ctx)
	if err != nil {
		return nil, err
	}
	if renewed || r.unchecked {
		r.unchecked = true
		if err := r.reopenStorage(ctx); err != nil {
			return nil, err
		}
		r.unchecked = false
	}
	r.disposeUnconfirmed(ctx)
	latest := r.store.Latest()
	if latest == nil {
		r.log.Info("no completed checkpoint yet: starting over")
	} else {
		r.log.Info("restoring from checkpoint", "id", latest.Metadata.CheckpointID, "pointer", latest.Location.ExternalPointer)
	}
	return r.prepare(ctx, latest)
}

// prepare checks the checkpoint an attempt will restore against the job and moves aside
// the output committed after it (all committed output for a fresh start). It returns
// the checkpoint's metadata, nil for a fresh start.
func (r *recovery) prepare(ctx context.Context, c *checkpoint.Completed) (*checkpoint.Metadata, error) {
	var m *checkpoint.Metadata
	var id int64
	if c != nil {
		m, id = c.Metadata, c.Metadata.CheckpointID
		if err := r.shape.CheckRestore(m, r.allowNonRestored); err != nil {
			return nil, restart.Permanent(fmt.Errorf("restore %s: %w", c.Location.ExternalPointer, err))
		}
	}
	moved, where, err := r.job.RewindOutput(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", r.job.Name, err)
	}
	if moved > 0 {
		what := fmt.Sprintf("after checkpoint %d, which this attempt restores", id)
		if c == nil {
			what = "by an earlier run; this run starts from no checkpoint"
		}
		r.log.Warn(fmt.Sprintf("moved aside %d output files committed %s, so nothing is committed twice", moved, what),
			"to", where)
	}
	return m, nil
}

// latest returns the newest of the job's completed checkpoints list whose metadata and
// state read back intact, warning about each damaged one it skips.
func (r *recovery) latest(ctx context.Context, list []sdk.CompletedCheckpointStorageLocation) (*checkpoint.Completed, error) {
	// Reading every state stream back takes as long as writing it did: bound it by the
	// checkpoint timeout, not by one call's.
	verify := verifyWithin(r.store.Access(), max(r.cfg.Checkpointing.Timeout, r.s.CallTimeout()))
	return latestCheckpoint(ctx, r.store.Access(), list, r.job.Name, r.s.CallTimeout(), verify, r.log)
}

// resolve loads the checkpoint or savepoint a pointer names. The run owns it only under
// claim mode CLAIM.
func (r *recovery) resolve(ctx context.Context, pointer string) (*checkpoint.Completed, error) {
	storage := r.s.Storage()
	var c checkpoint.Completed
	err := r.call(ctx, func(ctx context.Context) error {
		loc, err := storage.ResolveCheckpoint(ctx, pointer)
		if err != nil {
			return err
		}
		m, err := checkpoint.Load(ctx, r.store.Access(), loc)
		if err != nil {
			return err
		}
		// Under claim mode CLAIM the run owns what it restored and retention may dispose
		// of it; under NO_CLAIM (the default) and LEGACY it never does.
		c = checkpoint.Completed{Location: loc, Metadata: m, Owned: r.cfg.Recovery.ClaimMode == config.Claim}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// earlier returns the intact completed checkpoints of list older than latest, oldest
// first, for the store to retain (and dispose of beyond num-retained) beside latest when a
// run resumes from it. Damaged ones are left alone: they never resolve to a restorable
// state, and what they reference stays with them.
func (r *recovery) earlier(ctx context.Context, list []sdk.CompletedCheckpointStorageLocation, latest *checkpoint.Completed) []*checkpoint.Completed {
	var out []*checkpoint.Completed
	for _, loc := range list {
		if loc.ExternalPointer == latest.Location.ExternalPointer {
			break
		}
		var m *checkpoint.Metadata
		err := r.call(ctx, func(ctx context.Context) (err error) {
			m, err = checkpoint.Load(ctx, r.store.Access(), loc)
			return err
		})
		if err != nil {
			r.log.Warn("leaving a damaged checkpoint alone", "pointer", loc.ExternalPointer, "error", err)
			continue
		}
		if m.CheckpointID >= latest.Metadata.CheckpointID {
			break
		}
		out = append(out, &checkpoint.Completed{Location: loc, Metadata: m, Owned: true})
	}
	return out
}

// restored tells the monitor what an attempt restores (nothing for nil).
func (r *recovery) restored(m *checkpoint.Metadata) {
	if m == nil {
		return
	}
	r.mon.RestoredFrom(m.CheckpointID, time.Now(), r.pointerOf(m), m.Savepoint)
}

// describe names the checkpoint or savepoint m, with its pointer while it is retained.
func (r *recovery) describe(m *checkpoint.Metadata) string {
	what := fmt.Sprintf("checkpoint %d", m.CheckpointID)
	if m.Savepoint {
		what = fmt.Sprintf("savepoint %d", m.CheckpointID)
	}
	if p := r.pointerOf(m); p != "" {
		what += " (" + p + ")"
	}
	return what
}

// pointerOf returns the pointer of the retained checkpoint whose metadata is m ("" if none
// is).
func (r *recovery) pointerOf(m *checkpoint.Metadata) string {
	for _, c := range r.store.Retained() {
		if c.Metadata == m {
			return c.Location.ExternalPointer
		}
	}
	return ""
}

// reopenStorage moves the store to the session's new storage access after the storage
// plugin restarted, and checks that the latest retained checkpoint survived the restart
// (jmstorage without a directory keeps checkpoints in its process memory).
func (r *recovery) reopenStorage(ctx context.Context) error {
	r.store.SetAccess(r.s.Access())
	latest := r.store.Latest()
	if latest == nil {
		return nil
	}
	storage := r.s.Storage()
	err := r.call(ctx, func(ctx context.Context) error {
		_, err := storage.ResolveCheckpoint(ctx, latest.Location.ExternalPointer)
		return err
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, sdk.ErrNotFound) {
		return fmt.Errorf("checkpoint storage %s restarted: resolve checkpoint %d: %w", r.s.StorageName(), latest.Metadata.CheckpointID, err)
	}
	name := r.s.StorageName()
	lost := fmt.Errorf("checkpoint storage %s restarted and checkpoint %d (%s) is gone with it: %s keeps checkpoints in its process memory unless it has a directory, so they die with the process: %w",
		name, latest.Metadata.CheckpointID, latest.Location.ExternalPointer, name, err)
	if !r.cfg.Restart.StartOverOnCheckpointLoss {
		return restart.Permanent(fmt.Errorf("%w; stopping rather than pretending to restore (set execution.recovery.start-over-on-checkpoint-loss: true to start the job over, or use fsstorage)", lost))
	}
	r.log.Warn("starting the job over from the beginning", "reason", lost)
	r.store.Forget()
	return nil
}

// disposeUnconfirmed deletes the checkpoints of this run that completed in the storage but
// that the runner never confirmed (the storage failed or died while answering the metadata
// publication). The restore goes back past them and discards their sink transactions, so
// a later --from latest must not find them. Checkpoints up to floor predate the run.
func (r *recovery) disposeUnconfirmed(ctx context.Context) {
	newest := r.floor
	if latest := r.store.Latest(); latest != nil {
		newest = max(newest, latest.Metadata.CheckpointID)
	}
	access := r.store.Access()
	var list []sdk.CompletedCheckpointStorageLocation
	if err := r.call(ctx, func(ctx context.Context) (err error) {
		list, err = access.ListCompletedCheckpoints(ctx)
		return err
	}); err != nil {
		r.log.Warn("listing checkpoints to dispose of unconfirmed ones", "error", err)
		return
	}
	for _, c := range list {
		if c.CheckpointID <= newest {
			continue
		}
		r.log.Warn("disposing of a checkpoint the runner never confirmed", "id", c.CheckpointID, "pointer", c.ExternalPointer)
		if err := r.call(ctx, func(ctx context.Context) error { return access.DisposeCheckpoint(ctx, c) }); err != nil {
			r.log.Warn("disposing of an unconfirmed checkpoint", "id", c.CheckpointID, "error", err)
		}
	}
}

// latestCheckpoint returns the newest of job's completed checkpoints list whose metadata
// loads (each read bounded by timeout) and passes verify, warning about each damaged one it
// skips: metadata that does not decode, belongs to another job, or whose id is not its
// location's, and state that does not read back intact (sizes and CRC-32C).
func latestCheckpoint(ctx context.Context, access sdk.CheckpointStorageAccess, list []sdk.CompletedCheckpointStorageLocation, job string, timeout time.Duration,
	verify func(context.Context, *checkpoint.Metadata) error, log hclog.Logger) (*checkpoint.Completed, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	load := func(loc sdk.CompletedCheckpointStorageLocation) (*checkpoint.Metadata, error) {
		ctx := ctx
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		m, err := checkpoint.Load(ctx, access, loc)
		if err == nil && m.JobID != job {
			err = fmt.Errorf("%s: the metadata is of job %q, not %q: %w", loc.ExternalPointer, m.JobID, job, sdk.ErrCorrupt)
		}
		return m, err
	}
	var skipped []string
	for i := len(list) - 1; i >= 0; i-- {
		m, err := load(list[i])
		if err == nil {
			err = verify(ctx, m)
		}
		if err != nil {
			if !damaged(err) {
				// Not known to be damaged (a storage that did not answer, say): falling
				// back to an older checkpoint would be wrong.
				return nil, fmt.Errorf("read checkpoint %s: %w", list[i].ExternalPointer, err)
			}
			log.Warn("skipping a damaged checkpoint; trying the previous one", "pointer", list[i].ExternalPointer, "error", err)
			skipped = append(skipped, list[i].ExternalPointer)
			continue
		}
		return &checkpoint.Completed{Location: list[i], Metadata: m, Owned: true}, nil
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("%w (damaged: %v)", errNoCheckpoint, skipped)
	}
	return nil, errNoCheckpoint
}

// errNoCheckpoint says the storage lists no completed checkpoint of the job that reads back
// intact.
var errNoCheckpoint = errors.New("no intact completed checkpoint")

// storageText names the run's checkpoint storage and its directory, as the lease does.
func (r *recovery) storageText() string {
	if dir := r.cfg.Checkpointing.Dir; dir != "" {
		return fmt.Sprintf("%s (%s)", r.s.StorageName(), dir)
	}
	return r.s.StorageName()
}

// noCheckpointHint says why a job may have no checkpoint to resume from under cfg, and
// what to do instead.
func noCheckpointHint(cfg *config.Config) string {
	if d := explain.Config(cfg).Durable; d != nil && !*d {
		return fmt.Sprintf("%s keeps checkpoints in its process memory when %s is not set, so none outlive the runner that took them: "+
			"run without --from to start fresh, and set %s to resume a later run", cfg.CheckpointStorage, config.KeyCheckpointDir, config.KeyCheckpointDir)
	}
	return fmt.Sprintf("run without --from to start fresh (the job has not completed a checkpoint yet, or `runner stop` deleted them: "+
		"it does unless %s is %s; `runner stop --savepoint` leaves a savepoint to resume from)", config.KeyRetention, config.RetainOnCancel)
}

// refused reports whether err is a storage's answer about a pointer it was given: no such
// checkpoint, not a checkpoint at all, or a damaged one. Resolving it again gives the same
// answer, unlike a storage that failed to answer.
func refused(err error) bool { return damaged(err) || errors.Is(err, sdk.ErrInvalidArgument) }

// damaged reports whether err says a checkpoint's bytes are damaged or missing, as
// opposed to a storage that failed to answer.
func damaged(err error) bool {
	return errors.Is(err, sdk.ErrCorrupt) || errors.Is(err, sdk.ErrNotFound) || errors.Is(err, sdk.ErrUnsupported)
}

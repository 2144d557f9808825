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

// recovery decides what every attempt of a run starts from, as a short sequence of phases
// (next): the plugin session, the checkpoint (read, verified and retained by
// runtime/checkpoint: Store.List, Newest, Resolve, Store.Adopt, Store.Reopen,
// Store.DisposeUnconfirmed), the check against the job, and the rewind of the output
// committed after it, so that nothing is committed twice. It keeps the run's checkpoint
// store on the storage access of the session's current storage process. It
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
	// are the run's own (checkpoint.Store.DisposeUnconfirmed). listed says the storage was listed.
	floor  int64
	listed bool
	// allowNonRestored lets a restore drop the state of operators the job no longer has.
	allowNonRestored bool
	// unchecked says the store is on a storage access of a restarted storage process, and
	// the latest checkpoint it retains is not yet known to have survived the restart.
	unchecked bool
	// started says a start succeeded: every later call of next follows a failure.
	started bool
	// origin is where a start from FromLatestIfAny goes when the job has no checkpoint
	// taken since it (nil: none).
	origin *Origin
}

// next readies the run's next attempt and returns the checkpoint it restores (nil: none).
// Until one start succeeds, it starts (start); after that, every call follows a failure
// (afterFailure). Either way it checks the checkpoint against the job and moves aside the
// output committed after it, so that nothing is committed twice; a start then has the store
// adopt what the storage holds of the job. An error that restarting cannot fix is
// restart.Permanent; any other is one more failure for the restart strategy.
func (r *recovery) next(ctx context.Context, from string) (*checkpoint.Metadata, error) {
	var c *checkpoint.Completed
	var earlier []sdk.CompletedCheckpointStorageLocation
	var err error
	if !r.started {
		c, earlier, err = r.start(ctx, from)
	} else {
		c, err = r.afterFailure(ctx)
	}
	if err != nil {
		return nil, err
	}
	m, id, err := r.check(c)
	if err != nil {
		return nil, err
	}
	moved, where, err := r.job.RewindOutput(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", r.job.Name, err)
	}
	r.movedAside(c, id, moved, where)
	if !r.started {
		r.store.Adopt(ctx, c, earlier, r.s.CallTimeout(), r.log)
		r.started = true
	}
	return m, nil
}

// start opens the session's plugins and the job's store and finds the checkpoint the
// run's first attempt restores: none for from "", the newest intact one of the job for
// FromLatest (and for FromLatestIfAny, unless the job has no completed checkpoint: then
// none), or the checkpoint or savepoint a pointer resolves to. For FromLatest it also
// returns the job's completed checkpoints, which the store adopts beside it. A failed
// start may be tried again.
func (r *recovery) start(ctx context.Context, from string) (*checkpoint.Completed, []sdk.CompletedCheckpointStorageLocation, error) {
	if err := r.s.Open(ctx); err != nil {
		return nil, nil, err
	}
	// A new store for every start: nothing is retained yet.
	access := r.s.Access()
	r.store = checkpoint.NewStore(access, r.cfg.Checkpointing.NumRetained)
	r.store.OnDispose = r.mon.CheckpointDiscarded
	r.floor = 0
	existing, err := r.store.List(ctx, r.s.CallTimeout())
	if err != nil {
		return nil, nil, fmt.Errorf("list checkpoints of job %q: %w", r.job.Name, err)
	}
	for _, c := range existing {
		r.floor = max(r.floor, c.CheckpointID)
	}
	r.listed = true
	if from == FromLatestIfAny && r.origin != nil {
		c, err := r.since(ctx, existing)
		if c != nil || err != nil {
			return c, existing, err
		}
		from = r.origin.Pointer
		r.log.Info("no checkpoint since the savepoint the job was restored from: restoring it", "job", r.job.Name, "pointer", from)
	}
	if from == FromLatestIfAny {
		if from = FromLatest; len(existing) == 0 {
			r.log.Info("--from latest-if-any: the job has no completed checkpoint yet: starting fresh", "job", r.job.Name)
			from = ""
		}
	}
	switch from {
	case "":
		return nil, nil, nil
	case FromLatest:
		// Reading every state stream back takes as long as writing it did: bound it by the
		// checkpoint timeout, not by one call's.
		c, err := checkpoint.Newest(ctx, access, existing, r.job.Name, r.s.CallTimeout(), max(r.cfg.Checkpointing.Timeout, r.s.CallTimeout()), r.log)
		if errors.Is(err, checkpoint.ErrNoCheckpoint) { // the storage answered: starting again finds none either
			hint := noCheckpointHint(r.cfg)
			if err != checkpoint.ErrNoCheckpoint { // some are there, damaged
				hint = "restore a savepoint or another checkpoint with --from POINTER, or run without --from to start fresh"
			}
			return nil, nil, restart.Permanent(fmt.Errorf("--from latest: %w in checkpoint storage %s; %s", err, r.storageText(), hint))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--from latest: job %q: %w", r.job.Name, err)
		}
		r.log.Info("restoring from the latest checkpoint", "id", c.Metadata.CheckpointID, "pointer", c.Location.ExternalPointer)
		return c, existing, nil
	}
	// Under claim mode CLAIM the run owns what it restored and retention may dispose of
	// it; under NO_CLAIM (the default) and LEGACY it never does.
	c, err := checkpoint.Resolve(ctx, r.s.Storage(), access, from, r.cfg.Recovery.ClaimMode == config.Claim, r.s.CallTimeout())
	if err != nil {
		err = fmt.Errorf("--from %s: %w", from, err)
		if refused(err) { // the storage answered: starting again will not change it
			err = restart.Permanent(err)
		}
		return nil, nil, err
	}
	r.log.Info("restoring", "pointer", c.Location.ExternalPointer, "id", c.Metadata.CheckpointID, "savepoint", c.Metadata.Savepoint, "claim-mode", r.cfg.Recovery.ClaimMode)
	return c, nil, nil
}

// since returns the newest intact checkpoint of existing taken since the run's origin
// (at a lease epoch above the origin's), nil when there is none.
func (r *recovery) since(ctx context.Context, existing []sdk.CompletedCheckpointStorageLocation) (*checkpoint.Completed, error) {
	if len(existing) == 0 {
		return nil, nil
	}
	c, err := checkpoint.Newest(ctx, r.s.Access(), existing, r.job.Name, r.s.CallTimeout(), max(r.cfg.Checkpointing.Timeout, r.s.CallTimeout()), r.log)
	switch {
	case errors.Is(err, checkpoint.ErrNoCheckpoint):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("job %q: %w", r.job.Name, err)
	case c.Metadata.Epoch <= r.origin.Epoch:
		return nil, nil
	}
	r.log.Info("restoring from the latest checkpoint since the savepoint the job was restored from", "id", c.Metadata.CheckpointID, "pointer", c.Location.ExternalPointer)
	return c, nil
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
// the store to a new storage access if the storage plugin restarted, disposes of the
// checkpoints the runner never confirmed, and returns the newest retained checkpoint,
// which the next attempt restores (nil: start over).
func (r *recovery) afterFailure(ctx context.Context) (*checkpoint.Completed, error) {
	renewed, err := r.s.Ensure(ctx)
	if err != nil {
		return nil, err
	}
	if renewed || r.unchecked {
		r.unchecked = true
		if err := r.storageRestarted(r.store.Reopen(ctx, r.s.Access(), r.s.Storage(), r.s.CallTimeout())); err != nil {
			return nil, err
		}
		r.unchecked = false
	}
	r.store.DisposeUnconfirmed(ctx, r.floor, r.s.CallTimeout(), r.log)
	latest := r.store.Latest()
	if latest == nil {
		r.log.Info("no completed checkpoint yet: starting over")
	} else {
		r.log.Info("restoring from checkpoint", "id", latest.Metadata.CheckpointID, "pointer", latest.Location.ExternalPointer)
	}
	return latest, nil
}

// check checks the checkpoint an attempt will restore (nil: a fresh start) against the
// job, and returns its metadata and id (nil and 0 for a fresh start).
func (r *recovery) check(c *checkpoint.Completed) (*checkpoint.Metadata, int64, error) {
	if c == nil {
		return nil, 0, nil
	}
	if n := len(c.Metadata.Tasks); n > 0 {
		return nil, 0, restart.Permanent(fmt.Errorf("restore %s: it is the manifest of a savepoint of distributed job %q (%d tasks), which restores only in distributed mode: run the job with %s: true",
			c.Location.ExternalPointer, c.Metadata.JobID, n, config.KeyClusterEnabled))
	}
	if err := r.shape.CheckRestore(c.Metadata, r.allowNonRestored); err != nil {
		return nil, 0, restart.Permanent(fmt.Errorf("restore %s: %w", c.Location.ExternalPointer, err))
	}
	return c.Metadata, c.Metadata.CheckpointID, nil
}

// movedAside warns that the rewind before an attempt that restores c (nil: none), whose
// id is id, moved moved output files aside, to where.
func (r *recovery) movedAside(c *checkpoint.Completed, id int64, moved int, where string) {
	if moved == 0 {
		return
	}
	what := fmt.Sprintf("after checkpoint %d, which this attempt restores", id)
	if c == nil {
		what = "by an earlier run; this run starts from no checkpoint"
	}
	r.log.Warn(fmt.Sprintf("moved aside %d output files committed %s, so nothing is committed twice", moved, what),
		"to", where)
}

// restored tells the monitor what an attempt restores (nothing for nil).
func (r *recovery) restored(m *checkpoint.Metadata) {
	if m == nil {
		return
	}
	r.mon.RestoredFrom(m.CheckpointID, time.Now(), r.pointerOf(m), m.Savepoint)
}

// describe names the checkpoint or savepoint m, with its pointer while it is retained and
// the job that took it when that is another.
func (r *recovery) describe(m *checkpoint.Metadata) string {
	what := fmt.Sprintf("checkpoint %d", m.CheckpointID)
	if m.Savepoint {
		what = fmt.Sprintf("savepoint %d", m.CheckpointID)
	}
	if p := r.pointerOf(m); p != "" {
		what += " (" + p + ")"
	}
	if m.JobID != "" && r.job != nil && m.JobID != r.job.Name {
		// Another job's checkpoint of the same type restores, and then fails on what it
		// names of that job (its output's pending files): say whose it is.
		what += fmt.Sprintf(", taken by another job, %q (this job is %q)", m.JobID, r.job.Name)
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

// storageRestarted says what err, the answer of the restarted storage plugin about the
// latest retained checkpoint (checkpoint.Store.Reopen), means for the run: nil when the
// checkpoint survived the restart, or when it did not and the configuration says to start
// over (then the store forgets it); otherwise an error, permanent when the checkpoint is
// gone (jmstorage without a directory keeps checkpoints in its process memory).
func (r *recovery) storageRestarted(err error) error {
	if err == nil {
		return nil
	}
	latest := r.store.Latest()
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
func refused(err error) bool {
	return checkpoint.Damaged(err) || errors.Is(err, sdk.ErrInvalidArgument)
}

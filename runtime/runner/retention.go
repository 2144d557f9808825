package runner

import (
	"context"
	"errors"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
)

// fullFirstCheckpoint reports whether an attempt that restores restore must take full
// snapshots until one of its checkpoints completes: the run restored a checkpoint it does
// not own (claim mode NO_CLAIM), so no checkpoint it keeps may reference that
// checkpoint's files. Under CLAIM the run owns it; under the deprecated LEGACY mode later
// checkpoints may reference it; --from latest resumes the job's own checkpoints.
func fullFirstCheckpoint(cfg *config.Config, store *checkpoint.Store, restore *checkpoint.Metadata) bool {
	if restore == nil || cfg.Recovery.ClaimMode == config.ClaimLegacy {
		return false
	}
	for _, c := range store.Retained() {
		if c.Metadata == restore {
			return !c.Owned
		}
	}
	return false
}

// ErrJobCancelled is the cause with which the context of Executor.Run is cancelled to
// cancel the job (runner stop without a savepoint), as opposed to stopping the runner
// (SIGINT, SIGTERM, any other cancellation), which suspends the job: its checkpoints stay,
// and --from latest resumes it, as a Flink job suspended by a JobManager shutdown is
// resumed from its checkpoints.
var ErrJobCancelled = errors.New("job cancelled")

// disposeOnCancel deletes the checkpoints the run owns when the job was cancelled (ctx
// cancelled with the cause ErrJobCancelled), unless
// execution.checkpointing.externalized-checkpoint-retention is RETAIN_ON_CANCELLATION.
// DELETE_ON_CANCELLATION and Flink's default NO_EXTERNALIZED_CHECKPOINTS delete them.
// Checkpoints restored without being claimed are not the run's and stay.
func (x *Executor) disposeOnCancel(ctx context.Context, store *checkpoint.Store) {
	retention := x.Config.Checkpointing.Retention
	if !errors.Is(context.Cause(ctx), ErrJobCancelled) || retention == config.RetainOnCancel {
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := store.DisposeOwned(dctx)
	if err != nil {
		x.Logger.Warn("deleting the checkpoints of the cancelled job", "retention", retention, "error", err)
	}
	x.Logger.Info("job cancelled: deleted its checkpoints ("+config.KeyRetention+")", "retention", retention, "checkpoints", n)
}

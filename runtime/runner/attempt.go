package runner

import (
	"context"
	"errors"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/progress"
	"github.com/flowstate/flowstate/runtime/session"
)

// attempt runs one attempt of job from restore (nil: fresh), with the plugins of sess;
// every commit checks owner's leases first.
func (x *Executor) attempt(ctx context.Context, job *dataflow.Job, sess *session.Session, owner *ownership.Owner, store *checkpoint.Store, restore *checkpoint.Metadata) error {
	cfg := x.Config
	stats := &dataflow.RunStats{}
	attemptCtx, cancel := context.WithCancelCause(ctx)
	stopWatch := sess.Watch(attemptCtx, cancel)
	err := dataflow.Run(attemptCtx, job, dataflow.Env{
		Backend: sess.Backend(), BackendName: cfg.StateBackend, Checkpoints: store, Restore: restore,
		Interval: cfg.Checkpointing.Interval, Timeout: cfg.Checkpointing.Timeout,
		TolerableFailures: cfg.Checkpointing.TolerableFailed, Savepoints: x.Savepoints,
		MinPause: cfg.Checkpointing.MinPause, MaxConcurrent: cfg.Checkpointing.MaxConcurrent,
		AtLeastOnce:         cfg.Checkpointing.Mode == config.ModeAtLeastOnce,
		FullFirstCheckpoint: fullFirstCheckpoint(cfg, store, restore),
		Logger:              x.Logger, OnCheckpoint: x.OnCheckpoint, Stats: stats,
		CancellationTimeout:   cfg.Restart.CancellationTimeout,
		OnCancellationTimeout: func(n int) { sess.KillStuck(n, cfg.Restart.CancellationTimeout) },
		Fence:                 owner.Check,
		Epoch:                 owner.Epoch,
		Events:                x.Monitor.Events(),
		RestoreProgress: func(total int64) dataflow.Progress {
			return progress.New(progress.Options{Title: "restore", Total: total, Logger: x.Logger})
		},
	})
	stopWatch()
	// The attempt ended: no snapshot can reference the shared streams retention left for
	// one in flight (see checkpoint.Store) any more. A failure leaves them to the next start.
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	if derr := store.DiscardDeferred(dctx); derr != nil {
		x.Logger.Warn("retention", "error", derr)
	}
	dcancel()
	if cause := context.Cause(attemptCtx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	cancel(nil)
	x.addStats(stats)
	return err
}

func (x *Executor) addStats(s *dataflow.RunStats) {
	if x.Stats == nil {
		return
	}
	x.Stats.Add(s)
}

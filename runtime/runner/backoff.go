package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/restart"
)

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

// permanent reports whether err is one that restarting cannot fix: marked so, an
// incompatible checkpoint, or a job another runner holds.
func permanent(err error) bool {
	return restart.IsPermanent(err) || errors.Is(err, checkpoint.ErrIncompatible) || errors.As(err, new(*ownership.HeldError))
}

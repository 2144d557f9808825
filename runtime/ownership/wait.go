package ownership

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/progress"
)

// Wait waits until the lease that refused the run (err, a *HeldError) expires, with a
// countdown, when the owner waits for leases (Settings.Wait); then the caller tries again.
// It reports whether it waited; its error is ctx's, if ctx ended first.
func (o *Owner) Wait(ctx context.Context, err error) (bool, error) {
	var held *HeldError
	if !o.wait || !errors.As(err, &held) {
		return false, nil
	}
	left := max(held.Left(), 0) + leaseWaitMargin
	o.log.Warn("the job is held by another runner: waiting for its lease to expire, then taking it over",
		"lease", held.Where, "holder", held.Record.Holder.String(), "expires-in", left.Round(time.Millisecond), "why", held.Alive)
	title := fmt.Sprintf("lease of %s expires (%s %s)", held.Where, cmp.Or(held.TimeoutKey, "lease timeout"), held.Record.TTL())
	if err := progress.Countdown(ctx, progress.Options{Title: title, Logger: o.log}, left); err != nil {
		return true, fmt.Errorf("waiting for the lease of %s to expire: %w", held.Where, err)
	}
	return true, nil
}

// leaseWaitMargin is waited past a lease's expiry, so that the next look finds it expired.
const leaseWaitMargin = 10 * time.Millisecond

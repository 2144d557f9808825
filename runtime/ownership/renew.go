package ownership

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
)

// renewLoop renews the lease every RenewEvery(TTL), and a renewal that failed without
// losing the lease every tenth of the timeout, until Release or until the lease is lost
// to a conflicting record; a renewal is brought forward to the end of the lease's
// validity, if that comes first. A lease that lapsed (its validity ran out between two
// renewals) is renewed on at the same pace, not at once again and again: the next
// renewal that goes through makes it valid again.
func (l *Lease) renewLoop() {
	defer close(l.done)
	every, retry := RenewEvery(l.opts.TTL), l.opts.TTL/10
	wait := every
	for {
		l.mu.Lock()
		left := l.renewedAt + Valid(l.opts.TTL) - l.clock.Elapsed()
		l.mu.Unlock()
		if left > 0 {
			wait = min(wait, left)
		}
		select {
		case <-l.stop:
			return
		case <-l.clock.After(wait):
		}
		if l.isLost() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := l.renew(ctx)
		cancel()
		switch {
		case errors.Is(err, ErrLost):
			return
		case err != nil:
			l.log.Warn("renewing a lease failed; retrying", "lease", l.opts.Where, "error", err)
			wait = retry
		default:
			wait = every
		}
	}
}

// renew writes the record again, at the version last written. A conflict means another
// holder's record, and loses the lease, unless the record is the lease's own: a write
// whose answer was lost (the storage plugin died, a timeout) went through, and the lease
// goes on from it.
func (l *Lease) renew(ctx context.Context) error {
	for range maxRounds {
		l.mu.Lock()
		rec, version, store := l.rec, l.version, l.store
		l.mu.Unlock()
		rec.Renewed, rec.Seq = l.clock.Now(), rec.Seq+1
		sent := l.clock.Elapsed()
		v, err := store.WriteLease(ctx, rec.encode(), version)
		if err == nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.lost == nil {
				l.rec, l.version, l.renewedAt = rec, v, sent
			}
			return l.lost
		}
		if !errors.Is(err, sdk.ErrConflict) {
			return fmt.Errorf("renew the lease of %s: %w", l.opts.Where, err)
		}
		cur, rerr := store.ReadLease(ctx)
		if rerr != nil {
			return fmt.Errorf("renew the lease of %s: the record changed, and reading it failed: %w", l.opts.Where, rerr)
		}
		if isOwn(cur.Data, rec) {
			own, _ := DecodeRecord(cur.Data)
			l.mu.Lock()
			l.rec, l.version = own, cur.Version
			l.mu.Unlock()
			continue
		}
		by, derr := DecodeRecord(cur.Data)
		if derr != nil {
			by = Record{}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.loseLocked(&LostError{Where: l.opts.Where, Epoch: rec.Epoch, By: &by})
		return l.lost
	}
	return fmt.Errorf("renew the lease of %s: gave up after %d rounds: %w", l.opts.Where, maxRounds, errRounds)
}

// errRounds is the cause of a renewal that kept finding its own record changed.
var errRounds = errors.New("the record kept changing")

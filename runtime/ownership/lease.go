package ownership

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
)

// Options configure a lease.
type Options struct {
	// TTL is the lease timeout: how long a record stays live after its last renewal.
	TTL time.Duration
	// Where says where the lease lives, for messages: "checkpoint storage fsstorage
	// (s3://b/ckpts), job \"wc\"".
	Where string
	// Clock is the time source; nil means SystemClock.
	Clock Clock
	// Logger receives failed renewals; nil means none.
	Logger hclog.Logger
	// TimeoutKey is the configuration key TTL comes from, named when a lease is refused.
	TimeoutKey string

	// dead judges whether a live record's holder has ended; nil means Dead.
	dead func(h Holder, renewed time.Time) (bool, string)
}

// Valid is how long a renewal keeps a lease of timeout ttl valid for its holder: ttl less
// a fifth, the margin for the clocks of holder and contender to disagree.
func Valid(ttl time.Duration) time.Duration { return ttl - ttl/5 }

// RenewEvery is how often a lease of timeout ttl is renewed: three renewals fit in one
// timeout, two of them in its validity.
func RenewEvery(ttl time.Duration) time.Duration { return ttl / 3 }

// maxRounds bounds the reads and writes Acquire and renew make before giving up.
const maxRounds = 4

// Lease is a held lease, renewed in the background until Release.
type Lease struct {
	opts  Options
	clock Clock
	log   hclog.Logger

	mu        sync.Mutex
	store     sdk.LeaseStore
	rec       Record
	version   string
	renewedAt time.Duration // clock.Elapsed() when the last successful write was sent
	lost      error
	lostCh    chan struct{}
	prev      *Record // the expired record Acquire took over, if any
	prevDead  string  // why prev's holder was known dead, when its record was still live

	stop chan struct{}
	done chan struct{}
}

// Acquire takes the lease of store for holder (its Since and Instance are filled in; Self
// gives the rest): it creates the record, or takes over one that is released, expired, or
// live but of a holder known to have ended on this machine (Dead), by compare-and-swap at
// the next epoch. A live record of any other holder is refused at once with a *HeldError.
// The lease is renewed every RenewEvery(opts.TTL) until Release.
func Acquire(ctx context.Context, store sdk.LeaseStore, holder Holder, opts Options) (*Lease, error) {
	if opts.TTL <= 0 {
		return nil, fmt.Errorf("lease of %s: timeout %s: must be positive", opts.Where, opts.TTL)
	}
	l := &Lease{opts: opts, clock: opts.Clock, log: opts.Logger, store: store, lostCh: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if l.clock == nil {
		l.clock = SystemClock{}
	}
	if l.log == nil {
		l.log = hclog.NewNullLogger()
	}
	dead := opts.dead
	if dead == nil {
		dead = Dead
	}
	var id [8]byte
	rand.Read(id[:])
	holder.Instance = hex.EncodeToString(id[:])
	holder.Since = l.clock.Now()
	for range maxRounds {
		cur, err := store.ReadLease(ctx)
		var prev Record
		var died string
		switch {
		case errors.Is(err, sdk.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("read the lease of %s: %w", opts.Where, err)
		default:
			if prev, err = DecodeRecord(cur.Data); err != nil {
				return nil, fmt.Errorf("the lease of %s does not read back (%w); if no runner holds it, delete the record", opts.Where, err)
			}
			if now := l.clock.Now(); prev.Live(now) {
				gone, why := dead(prev.Holder, prev.Renewed)
				if !gone {
					return nil, &HeldError{Where: opts.Where, Record: prev, Now: now, Alive: why, TimeoutKey: opts.TimeoutKey}
				}
				died = why
			}
		}
		rec := Record{Holder: holder, Epoch: prev.Epoch + 1, Renewed: l.clock.Now(), TTLMillis: opts.TTL.Milliseconds(), Seq: prev.Seq + 1}
		sent := l.clock.Elapsed()
		v, err := store.WriteLease(ctx, rec.encode(), cur.Version)
		if errors.Is(err, sdk.ErrConflict) {
			continue // another runner wrote first: read what it wrote
		}
		if err != nil {
			// The write may have happened: only a read tells.
			if got, rerr := store.ReadLease(ctx); rerr == nil && isOwn(got.Data, rec) {
				v, err = got.Version, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("write the lease of %s: %w", opts.Where, err)
		}
		l.rec, l.version, l.renewedAt = rec, v, sent
		if cur.Version != "" && !prev.Released {
			l.prev, l.prevDead = &prev, died
		}
		go l.renewLoop()
		return l, nil
	}
	return nil, fmt.Errorf("the lease of %s changed %d times while it was being acquired: other runners are starting; try again", opts.Where, maxRounds)
}

// isOwn reports whether data is a record written by rec's holder in rec's epoch.
func isOwn(data []byte, rec Record) bool {
	r, err := DecodeRecord(data)
	return err == nil && r.Instance == rec.Instance && r.Epoch == rec.Epoch && !r.Released
}

// Record returns the record the lease last wrote: its holder and epoch.
func (l *Lease) Record() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// TookOver returns the record of the holder whose lease Acquire took over, and why its
// holder was known dead when the record was still live ("" when it had expired); false
// when the lease was new or released.
func (l *Lease) TookOver() (prev Record, dead string, ok bool) {
	if l.prev == nil {
		return Record{}, "", false
	}
	return *l.prev, l.prevDead, true
}

// Where says where the lease lives.
func (l *Lease) Where() string { return l.opts.Where }

// SetStore makes the lease renew through store from now on: the same record, reached
// through a new access after the storage plugin restarted.
func (l *Lease) SetStore(store sdk.LeaseStore) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.store = store
}

// Check returns nil while the lease is valid, and an error wrapping ErrLost (a
// *LostError) when it is not: its last renewal is older than Valid(TTL) (it lapsed, and a
// later renewal may make it valid again), or a renewal found another holder's record (it
// is lost). Call it right before every commit.
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if age, valid := l.clock.Elapsed()-l.renewedAt, Valid(l.opts.TTL); age >= valid {
		return &LostError{Where: l.opts.Where, Epoch: l.rec.Epoch, Unrenewed: age, Valid: valid}
	}
	return nil
}

// isLost reports whether the lease is lost for good (not merely lapsed).
func (l *Lease) isLost() bool {
	select {
	case <-l.lostCh:
		return true
	default:
		return false
	}
}

// Cause returns Check's error, and for a lease that lapsed without a renewal reads the
// record once to name the runner that holds it now, if another does.
func (l *Lease) Cause(ctx context.Context) error {
	err := l.Check()
	var lost *LostError
	if !errors.As(err, &lost) || lost.By != nil {
		return err
	}
	l.mu.Lock()
	store, instance := l.store, l.rec.Instance
	l.mu.Unlock()
	cur, rerr := store.ReadLease(ctx)
	if rerr != nil {
		return err
	}
	by, derr := DecodeRecord(cur.Data)
	if derr != nil || by.Instance == instance {
		return err
	}
	named := *lost
	named.By = &by
	return &named
}

// Lost is closed once the lease is lost for good: another holder's record replaced it,
// or it was released. A lapse does not close it.
func (l *Lease) Lost() <-chan struct{} { return l.lostCh }

func (l *Lease) loseLocked(err error) {
	if l.lost == nil {
		l.lost = err
		close(l.lostCh)
	}
}

// Release stops the renewals and, unless the lease is lost, marks the record released
// (by compare-and-swap at the version last written, so a lapsed lease someone took over
// is left alone) so that the next runner need not wait for it to expire. It returns the
// error of that last write.
func (l *Lease) Release(ctx context.Context) error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
	if l.isLost() {
		return nil
	}
	l.mu.Lock()
	rec, version, store := l.rec, l.version, l.store
	l.mu.Unlock()
	rec.Released, rec.Renewed, rec.Seq = true, l.clock.Now(), rec.Seq+1
	if _, err := store.WriteLease(ctx, rec.encode(), version); err != nil {
		if errors.Is(err, sdk.ErrConflict) { // it lapsed, and another runner took it over
			l.mu.Lock()
			l.loseLocked(&LostError{Where: l.opts.Where, Epoch: rec.Epoch})
			l.mu.Unlock()
			return l.Cause(ctx)
		}
		return fmt.Errorf("release the lease of %s: %w", l.opts.Where, err)
	}
	l.mu.Lock()
	l.loseLocked(fmt.Errorf("the lease of %s was released: %w", l.opts.Where, ErrLost))
	l.mu.Unlock()
	return nil
}

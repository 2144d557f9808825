package ownership

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// memStore is a linearizable in-memory sdk.LeaseStore that reports its writes and can
// fail them.
type memStore struct {
	mu      sync.Mutex
	data    []byte
	version int // 0: no record
	// writes receives one value per successful write.
	writes chan struct{}
	// failWrites fails that many of the next writes without applying them.
	failWrites int
	// lostAnswers applies that many of the next writes but answers them with an error.
	lostAnswers int
	calls       int
}

func newMemStore() *memStore { return &memStore{writes: make(chan struct{}, 1000)} }

var errTransient = errors.New("storage unavailable")

func (s *memStore) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.version == 0 {
		return sdk.LeaseRecord{}, fmt.Errorf("no lease: %w", sdk.ErrNotFound)
	}
	return sdk.LeaseRecord{Data: append([]byte(nil), s.data...), Version: strconv.Itoa(s.version)}, nil
}

func (s *memStore) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.failWrites > 0 {
		s.failWrites--
		return "", errTransient
	}
	current := ""
	if s.version > 0 {
		current = strconv.Itoa(s.version)
	}
	if ifVersion != current {
		return "", fmt.Errorf("at version %q, not %q: %w", current, ifVersion, sdk.ErrConflict)
	}
	s.data, s.version = append([]byte(nil), data...), s.version+1
	s.writes <- struct{}{}
	if s.lostAnswers > 0 {
		s.lostAnswers--
		return "", errTransient
	}
	return strconv.Itoa(s.version), nil
}

// record decodes the stored record.
func (s *memStore) record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := DecodeRecord(s.data)
	if err != nil {
		panic(err)
	}
	return r
}

// callCount returns how many reads and writes the store served.
func (s *memStore) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// dyingStore is an access to memStore that dies, as the access of a killed storage plugin
// does.
type dyingStore struct {
	*memStore
	dead atomic.Bool
}

func (d *dyingStore) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	if d.dead.Load() {
		return sdk.LeaseRecord{}, errTransient
	}
	return d.memStore.ReadLease(ctx)
}

func (d *dyingStore) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	if d.dead.Load() {
		return "", errTransient
	}
	return d.memStore.WriteLease(ctx, data, ifVersion)
}

// fakeClock is a Clock the test moves. Its timers fire when Advance passes them, unless
// the clock is frozen: a frozen process runs none of its timers.
type fakeClock struct {
	mu     sync.Mutex
	wall   time.Time
	mono   time.Duration
	timers []fakeTimer
	frozen bool
	// armed receives one value each time a timer is set.
	armed chan struct{}
}

type fakeTimer struct {
	at time.Duration
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{wall: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), mono: time.Hour, armed: make(chan struct{}, 1000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

func (c *fakeClock) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := fakeTimer{at: c.mono + d, ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.armed <- struct{}{}
	return t.ch
}

// nextTimer returns how long after now the earliest pending timer fires; false when none
// is pending.
func (c *fakeClock) nextTimer() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return 0, false
	}
	next := c.timers[0].at
	for _, t := range c.timers[1:] {
		next = min(next, t.at)
	}
	return next - c.mono, true
}

// Advance moves both clocks by d and fires the timers due, unless frozen.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall, c.mono = c.wall.Add(d), c.mono+d
	c.fireLocked()
}

// Freeze stops firing timers; Thaw fires the ones due since.
func (c *fakeClock) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = true
}

func (c *fakeClock) Thaw() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = false
	c.fireLocked()
}

func (c *fakeClock) fireLocked() {
	if c.frozen {
		return
	}
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at <= c.mono {
			t.ch <- c.wall
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

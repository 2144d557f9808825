package ownership

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing/synctest"
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

// fakeClock is the Clock of a test that runs in a synctest bubble: Now, Elapsed and After
// read the bubble's fake time, which stands still while any goroutine of the bubble runs and
// jumps to the next timer once all are blocked. Frozen, it holds back the timers that come
// due, as a stopped process runs none of them, until Thaw.
type fakeClock struct {
	start time.Time
	mu    sync.Mutex
	// pending are the timers not yet due.
	pending map[chan time.Time]fakeTimer
	// held are the timers that came due while the clock was frozen.
	held   []chan time.Time
	frozen bool
	// armed counts the timers set; waitArmed counts off the ones it saw in seen.
	armed, seen int
}

// fakeTimer is a timer of a fakeClock: set for d, due at due.
type fakeTimer struct {
	d   time.Duration
	due time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{start: time.Now(), pending: map[chan time.Time]fakeTimer{}}
}

// Now is the bubble's wall clock in UTC, as a record read back carries it.
func (c *fakeClock) Now() time.Time { return time.Now().UTC() }

func (c *fakeClock) Elapsed() time.Duration { return time.Since(c.start) }

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[ch] = fakeTimer{d: d, due: time.Now().Add(d)}
	c.armed++
	time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.pending, ch)
		if c.frozen {
			c.held = append(c.held, ch)
			return
		}
		ch <- time.Now()
	})
	return ch
}

// nextTimer returns the duration the earliest pending timer was set for; false when none
// is pending.
func (c *fakeClock) nextTimer() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next *fakeTimer
	for _, t := range c.pending {
		if next == nil || t.due.Before(next.due) {
			next = &t
		}
	}
	if next == nil {
		return 0, false
	}
	return next.d, true
}

// Advance lets d pass: the test sleeps d of the bubble's time, in which the timers due
// fire (unless frozen); it returns once every goroutine of the bubble is blocked again.
func (c *fakeClock) Advance(d time.Duration) {
	time.Sleep(d) // a step of the bubble's fake clock: it passes at once
	synctest.Wait()
}

// Freeze holds back the timers that come due; Thaw fires the ones due since.
func (c *fakeClock) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = true
}

func (c *fakeClock) Thaw() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = false
	for _, ch := range c.held {
		ch <- time.Now()
	}
	c.held = nil
}

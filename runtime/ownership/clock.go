package ownership

import "time"

// Clock is what a lease reads the time from; tests inject their own.
type Clock interface {
	// Now is the wall-clock time, written into lease records and compared with the times
	// other runners wrote.
	Now() time.Time
	// Elapsed reads a monotonic clock that keeps counting while the process is stopped
	// and while the machine sleeps; only differences between two readings mean anything.
	// A lease's validity is measured on it, so a runner that wakes up after a freeze sees
	// its lease expired before it talks to anyone.
	Elapsed() time.Duration
	// After sends on the returned channel once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the machine's clock: the wall clock, CLOCK_BOOTTIME on Linux for
// Elapsed (CLOCK_MONOTONIC stops while the machine sleeps), Go's monotonic clock
// elsewhere.
type SystemClock struct{}

var _ Clock = SystemClock{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// Elapsed implements Clock.
func (SystemClock) Elapsed() time.Duration { return elapsed() }

// After implements Clock.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Package testwait is how the repository's tests wait for something that happens on its
// own time, outside the test's control: a line in a process's output, a file, a process's
// exit, a metric. It owns the one polling loop those tests use, with a deadline and a
// failure that says what was awaited and what was seen instead. A test waits for an event
// it can receive (a channel, a process's exit) by receiving it, not through this package,
// and never sleeps a fixed time instead of waiting. Buffer collects output written on its
// own time for such a wait.
//
// It must never import a package of this repository: the tests of every part use it.
package testwait

import (
	"errors"
	"testing"
	"time"
)

// The pauses between two probes double from firstPause up to maxPause: an event that comes
// at once is seen at once, and a long wait costs a probe every maxPause.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

// stopError is an error of a probe marked final (Stop).
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// Stop marks err as final: For fails at once with it instead of probing again. A probe
// returns it when what it awaits can no longer come, such as the line of a process that
// exited.
func Stop(err error) error { return &stopError{err} }

// For waits until probe returns nil, and fails t unless it does within the given time.
// It calls probe at once, then after pauses that double from 1 ms up to 50 ms. The error
// probe returns says what it saw instead ("2 of 3 checkpoints", a request's error); the
// failure names what was awaited, how long For waited, and the last such error. An error
// wrapped by Stop ends the wait at once.
func For(t testing.TB, what string, within time.Duration, probe func() error) {
	t.Helper()
	start := time.Now()
	pause := firstPause
	for {
		err := probe()
		if err == nil {
			return
		}
		waited := time.Since(start).Round(time.Millisecond)
		if stop := (*stopError)(nil); errors.As(err, &stop) {
			t.Fatalf("waiting for %s: gave up after %s: %v", what, waited, err)
			return
		}
		if waited >= within {
			t.Fatalf("waiting for %s: not within %s; last seen: %v", what, within, err)
			return
		}
		time.Sleep(min(pause, within-waited))
		pause = min(2*pause, maxPause)
	}
}

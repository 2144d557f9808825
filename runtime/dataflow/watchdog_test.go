package dataflow

import (
	"testing"
	"testing/synctest"
	"time"
)

// The watchdog tests run in synctest bubbles: the watchdog's own ticker runs on the
// bubble's fake clock, which the test moves with time.Sleep (at once: no real time passes).

// TestWatchdogFiresUntilStopped: the watchdog calls fire(1), fire(2), ... one interval
// apart from its start, and never again once stopped.
func TestWatchdogFiresUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type call struct {
			n  int
			at time.Duration
		}
		var calls []call
		start := time.Now()
		w := &watchdog{every: time.Second, fire: func(n int) { calls = append(calls, call{n, time.Since(start)}) }}
		w.start()
		time.Sleep(2500 * time.Millisecond) // the fake clock's step: two intervals and a half
		w.stop()
		if want := []call{{1, time.Second}, {2, 2 * time.Second}}; len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
			t.Fatalf("calls %v in 2.5 s; want %v", calls, want)
		}
		time.Sleep(time.Hour) // the fake clock's step: long after the stop
		if len(calls) != 2 {
			t.Fatalf("the watchdog fired %d more times after stop: %v", len(calls)-2, calls[2:])
		}
	})
}

// TestWatchdogDisabled: a zero interval or no fire function starts nothing.
func TestWatchdogDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &watchdog{every: 0, fire: func(int) { t.Error("a disabled watchdog fired") }}
		w.start()
		time.Sleep(time.Hour) // the fake clock's step
		w.stop()
		w = &watchdog{every: time.Millisecond} // no fire func: nothing to call
		w.start()
		time.Sleep(time.Hour) // the fake clock's step: a started ticker would call the nil fire
		w.stop()
	})
}

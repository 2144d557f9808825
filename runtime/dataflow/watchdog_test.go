package dataflow

import (
	"testing"
	"time"
)

// manualTicker is a ticker the test drives: each send on ticks is one tick.
func manualTicker(ticks chan time.Time) func(time.Duration) (<-chan time.Time, func()) {
	return func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
}

func TestWatchdogFiresUntilStopped(t *testing.T) {
	ticks := make(chan time.Time) // unbuffered: a send succeeds only when the watchdog takes it
	fired := make(chan int, 10)
	w := &watchdog{every: time.Second, fire: func(n int) { fired <- n }, ticker: manualTicker(ticks)}
	w.start()
	for want := 1; want <= 2; want++ {
		ticks <- time.Now()
		if got := <-fired; got != want {
			t.Fatalf("fire(%d) after tick %d", got, want)
		}
	}
	w.stop()
	select {
	case ticks <- time.Now():
		t.Fatal("the watchdog took a tick after stop")
	default: // nothing listens: its goroutine has ended
	}
	if len(fired) != 0 {
		t.Fatalf("fired %d more times", len(fired))
	}
}

func TestWatchdogDisabled(t *testing.T) {
	refuse := func(time.Duration) (<-chan time.Time, func()) {
		t.Error("a disabled watchdog started ticking")
		return nil, func() {}
	}
	w := &watchdog{every: 0, fire: func(int) { t.Error("a disabled watchdog fired") }, ticker: refuse}
	w.start()
	w.stop()
	w = &watchdog{every: time.Millisecond, ticker: refuse} // no fire func: nothing to call
	w.start()
	w.stop()
}

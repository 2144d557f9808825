package testwait

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a testing.TB whose Fatalf records the failure instead of ending the test.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failure = fmt.Sprintf(format, args...) }

// TestForReturnsOnceTheProbeSucceeds: For probes at once, then after pauses of 1, 2, 4
// and 8 ms, and returns at the probe that succeeds.
func TestForReturnsOnceTheProbeSucceeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		calls, start := 0, time.Now()
		For(r, "the fifth call", time.Minute, func() error {
			if calls++; calls < 5 {
				return fmt.Errorf("call %d", calls)
			}
			return nil
		})
		if r.failure != "" || calls != 5 {
			t.Fatalf("For failed with %q after %d calls; want success at the fifth", r.failure, calls)
		}
		if took := time.Since(start); took != 15*time.Millisecond {
			t.Fatalf("For took %s; want 15ms (pauses of 1, 2, 4 and 8 ms)", took)
		}
	})
}

// TestForFailsNamingWhatAndTheLastSeen: a probe that never succeeds fails the test once
// the time is up, naming what was awaited and the probe's last error; the pauses grow to
// 50 ms and no further.
func TestForFailsNamingWhatAndTheLastSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		calls, start := 0, time.Now()
		For(r, "three checkpoints", time.Second, func() error {
			calls++
			return fmt.Errorf("%d checkpoints", calls)
		})
		if took := time.Since(start); took != time.Second {
			t.Fatalf("For gave up after %s; want 1s", took)
		}
		// Probes at 0, 1, 3, 7, 15, 31 and 63 ms, then every 50 ms up to 963 ms, and at 1 s.
		if calls != 26 {
			t.Fatalf("For probed %d times in a second; want 26", calls)
		}
		if want := "waiting for three checkpoints: not within 1s; last seen: 26 checkpoints"; r.failure != want {
			t.Fatalf("failure %q; want %q", r.failure, want)
		}
	})
}

// TestStopEndsTheWaitAtOnce: a probe's error marked with Stop fails the test at the probe
// that returned it, with that error.
func TestStopEndsTheWaitAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		calls := 0
		exited := errors.New("the runner exited")
		For(r, "a line", time.Minute, func() error {
			if calls++; calls == 3 {
				return fmt.Errorf("no line: %w", Stop(exited))
			}
			return errors.New("no line")
		})
		if calls != 3 || !strings.HasPrefix(r.failure, "waiting for a line: gave up after 3ms: no line: the runner exited") {
			t.Fatalf("after %d calls the failure is %q; want one at the third naming the exit", calls, r.failure)
		}
	})
}

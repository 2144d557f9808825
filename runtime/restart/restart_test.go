package restart

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

// The tests of the policies that read the time run in synctest bubbles, on System: the
// bubble's clock is fake, and advance moves it.

// advance lets d pass in the test's bubble, at once.
func advance(d time.Duration) { time.Sleep(d) } // a step of the bubble's fake clock, not a wait

func settings(typ string) config.Restart { r := defaults(); r.Type = typ; return r }
func wantFail(t *testing.T, d Decision, in string) {
	t.Helper()
	if d.Restart {
		t.Fatalf("want the job to fail, got a restart after %s", d.Delay)
	}
	if !strings.Contains(d.Reason, in) {
		t.Fatalf("reason %q does not name %q", d.Reason, in)
	}
}

// defaults are Flink's defaults, as config gives them for a file without restart keys.
func defaults() config.Restart {
	c, err := config.Parse(nil, "")
	if err != nil {
		panic(err)
	}
	return c.Restart
}

func TestNewPicksTheConfiguredStrategy(t *testing.T) {
	for typ, want := range map[string]string{"fixed-delay": "*restart.FixedDelay", "failure-rate": "*restart.FailureRate",
		"exponential-delay": "*restart.ExponentialDelay", "none": "restart.None"} {
		p := New(settings(typ), System, nil)
		if got := typeName(p); got != want {
			t.Errorf("%s: got %s, want %s", typ, got, want)
		}
	}
}

func typeName(p Policy) string {
	switch p.(type) {
	case *FixedDelay:
		return "*restart.FixedDelay"
	case *FailureRate:
		return "*restart.FailureRate"
	case *ExponentialDelay:
		return "*restart.ExponentialDelay"
	case None:
		return "restart.None"
	}
	return "?"
}

func TestNoneNeverRestarts(t *testing.T) {
	wantFail(t, New(settings("none"), nil, nil).Failed(), "restart-strategy.type is none")
}

// Flink's fixed-delay counts every failure of the run: attempts restarts, then the job fails.
func TestFixedDelayCountsEveryFailure(t *testing.T) {
	r := settings("fixed-delay")
	r.Attempts, r.Delay = 3, 2*time.Second
	p := New(r, System, nil)
	for i := 1; i <= 3; i++ {
		if d := p.Failed(); !d.Restart || d.Delay != 2*time.Second {
			t.Fatalf("failure %d: got %+v, want a restart after 2s", i, d)
		}
	}
	wantFail(t, p.Failed(), "restart-strategy.fixed-delay.attempts is 3")
	r.Attempts = 0
	wantFail(t, New(r, nil, nil).Failed(), "attempts is 0")
	if d := New(defaults(), nil, nil); d.String() == "" {
		t.Error("String is empty")
	}
}

// failuresWithin counts the failures at most interval before now: the failure rate the
// strategy checks, computed on its own.
func failuresWithin(times []time.Time, now time.Time, interval time.Duration) int {
	n := 0
	for _, t := range times {
		if now.Sub(t) <= interval {
			n++
		}
	}
	return n
}

// Flink's failure-rate fails the job once more than max-failures-per-interval failures
// fall within failure-rate-interval; older failures stop counting.
func TestFailureRateWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := settings("failure-rate")
		r.FailureRate = config.FailureRate{MaxFailures: 2, Interval: time.Minute, Delay: 5 * time.Second}
		p := New(r, System, nil)
		step := func(after time.Duration) Decision { advance(after); return p.Failed() }
		for _, after := range []time.Duration{0, 30 * time.Second, 31 * time.Second} { // the third is 61s after the first
			if d := step(after); !d.Restart || d.Delay != 5*time.Second {
				t.Fatalf("after %s: got %+v, want a restart after 5s", after, d)
			}
		}
		// 30s, 61s and 70s: three failures within 40s.
		wantFail(t, step(9*time.Second), "restart-strategy.failure-rate.max-failures-per-interval (2)")

		// Random sequences against the window computed on its own.
		rng := rand.New(rand.NewPCG(1, 2))
		for round := 0; round < 200; round++ {
			p := New(r, System, nil)
			var times []time.Time
			for i := 0; i < 12; i++ {
				advance(time.Duration(rng.IntN(90)) * time.Second)
				times = append(times, time.Now())
				d := p.Failed()
				if want := failuresWithin(times, time.Now(), time.Minute) <= 2; d.Restart != want {
					t.Fatalf("round %d failure %d: restart %v, want %v (times %v)", round, i, d.Restart, want, times)
				}
				if !d.Restart {
					break
				}
			}
		}
	})
}

// Without jitter, exponential-delay's waits double up to the cap, start over once the job
// ran reset-backoff-threshold after its last restart, and attempts-before-reset-backoff
// restarts without a reset fail the job.
func TestExponentialDelayGrowsCapsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := settings("exponential-delay")
		r.ExponentialDelay = config.ExponentialDelay{InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Multiplier: 2,
			ResetThreshold: time.Hour, JitterFactor: 0, AttemptsBeforeReset: 100}
		p := New(r, System, nil)
		var got []time.Duration
		for i := 0; i < 6; i++ {
			d := p.Failed()
			if !d.Restart {
				t.Fatalf("failure %d: %s", i, d.Reason)
			}
			got = append(got, d.Delay)
			advance(d.Delay + time.Minute) // restarted, ran a minute, failed again
		}
		want := []time.Duration{1, 2, 4, 8, 10, 10}
		for i := range want {
			if got[i] != want[i]*time.Second {
				t.Fatalf("delays %v, want %v seconds", got, want)
			}
		}
		advance(time.Hour) // ran an hour after the last restart
		if d := p.Failed(); d.Delay != time.Second {
			t.Fatalf("after running reset-backoff-threshold: delay %s, want the initial 1s", d.Delay)
		}

		r.ExponentialDelay.AttemptsBeforeReset = 3
		p = New(r, System, nil)
		for i := 0; i < 3; i++ {
			d := p.Failed()
			if !d.Restart {
				t.Fatalf("restart %d refused: %s", i+1, d.Reason)
			}
			advance(d.Delay + time.Second)
		}
		wantFail(t, p.Failed(), "attempts-before-reset-backoff is 3")
		advance(2 * time.Hour) // a reset gives a fresh allowance, as in Flink
		if d := p.Failed(); !d.Restart || d.Delay != time.Second {
			t.Fatalf("after a reset: %+v", d)
		}
	})
}

// A failure reported while a restart is pending is the same attempt (Flink merges them).
func TestExponentialDelayMergesFailuresOfOneAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := settings("exponential-delay")
		r.ExponentialDelay.JitterFactor = 0
		p := New(r, System, nil)
		first := p.Failed()
		advance(first.Delay / 4)
		if d := p.Failed(); d.Delay != first.Delay*3/4 {
			t.Fatalf("a failure during the wait: delay %s, want the rest of the wait %s", d.Delay, first.Delay*3/4)
		}
		advance(first.Delay) // past the restart
		if d := p.Failed(); d.Delay != 1500*time.Millisecond {
			t.Fatalf("next attempt: %s, want 1.5s (Flink's default multiplier)", d.Delay)
		}
	})
}

// With jitter, every wait stays within jitter-factor of its exponential value and within
// [initial-backoff, max-backoff]; the extremes of the random source reach both ends.
func TestExponentialDelayJitterIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := config.ExponentialDelay{InitialBackoff: time.Second, MaxBackoff: 30 * time.Second, Multiplier: 1.5,
			ResetThreshold: time.Hour, JitterFactor: 0.25, AttemptsBeforeReset: 1000}
		bounds := func(attempt int) (lo, hi time.Duration) {
			b := math.Floor(1000 * math.Pow(1.5, float64(attempt)))
			off := math.Floor(b * 0.25)
			lo = time.Duration(math.Max(1000, math.Min(b-off, 30000))) * time.Millisecond
			hi = time.Duration(math.Max(1000, math.Min(b+off, 30000))) * time.Millisecond
			return lo, hi
		}
		for _, rnd := range []func() float64{rand.Float64, func() float64 { return 0 }, func() float64 { return math.Nextafter(1, 0) }} {
			p := &ExponentialDelay{Settings: x, Clock: System, Random: rnd}
			for attempt := 0; attempt < 15; attempt++ {
				d := p.Failed()
				lo, hi := bounds(attempt)
				if d.Delay < lo || d.Delay > hi {
					t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d.Delay, lo, hi)
				}
				advance(d.Delay + time.Millisecond)
			}
		}
		// The ends are reached: 4 restarts with the lowest and the highest random number.
		low := &ExponentialDelay{Settings: x, Clock: System, Random: func() float64 { return 0 }}
		high := &ExponentialDelay{Settings: x, Clock: System, Random: func() float64 { return math.Nextafter(1, 0) }}
		for attempt := 0; attempt < 4; attempt++ {
			lo, hi := bounds(attempt)
			if d := low.Failed().Delay; d != lo {
				t.Errorf("attempt %d with random 0: %s, want %s", attempt, d, lo)
			}
			if d := high.Failed().Delay; d != hi {
				t.Errorf("attempt %d with random ~1: %s, want %s", attempt, d, hi)
			}
			advance(time.Minute)
		}
	})
}

package restart

import (
	"fmt"
	"math"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

// ExponentialDelay waits InitialBackoff before the first restart and Multiplier times
// longer before each next one, up to MaxBackoff, each wait moved by a random jitter of up to
// JitterFactor of it (and kept within [InitialBackoff, MaxBackoff]). A failure that comes
// ResetThreshold or more after the job last restarted starts over at InitialBackoff. More
// than AttemptsBeforeReset restarts without such a reset fail the job. This is Flink's
// ExponentialDelayRestartBackoffTimeStrategy since 1.19 (FLIP-364); like Flink, a failure
// reported while a restart is still pending counts as the same attempt.
type ExponentialDelay struct {
	// Settings are restart-strategy.exponential-delay.*.
	Settings config.ExponentialDelay
	// Clock tells the time of each failure.
	Clock Clock
	// Random returns numbers in [0, 1) for the jitter.
	Random func() float64
	// attempt is the number of restarts since the last reset.
	attempt int
	// next is when the pending or last restart happens; zero before the first failure.
	next time.Time
}

// Failed implements Policy.
func (p *ExponentialDelay) Failed() Decision {
	now := p.Clock.Now()
	s := p.Settings
	if !p.next.IsZero() && !now.After(p.next) {
		return Decision{Restart: true, Delay: p.next.Sub(now)} // the same attempt
	}
	if p.next.IsZero() || now.Sub(p.next) >= s.ResetThreshold {
		p.attempt = 0
	}
	delay := p.backoff()
	p.next = now.Add(delay)
	p.attempt++
	if p.attempt > s.AttemptsBeforeReset {
		return Decision{Reason: fmt.Sprintf("%s is %d and the job failed %s without running %s (%s) in between",
			config.KeyExpAttempts, s.AttemptsBeforeReset, times(p.attempt), s.ResetThreshold, config.KeyExpResetThreshold)}
	}
	return Decision{Restart: true, Delay: delay}
}

// backoff is the wait before restart number attempt+1 since the last reset: b, the initial
// backoff times the multiplier to the power of attempt, plus a jitter in
// [-jitter*b, +jitter*b], kept within [initial, max]; in milliseconds, as Flink counts.
func (p *ExponentialDelay) backoff() time.Duration {
	s := p.Settings
	initial, maxMs := float64(s.InitialBackoff.Milliseconds()), float64(s.MaxBackoff.Milliseconds())
	b := math.Floor(initial * math.Pow(s.Multiplier, float64(p.attempt)))
	if b*(1-s.JitterFactor) >= maxMs || math.IsInf(b, 0) {
		return s.MaxBackoff.Truncate(time.Millisecond) // even the lowest jitter stays above the cap
	}
	offset := math.Floor(b * s.JitterFactor)
	jitter := math.Floor(p.Random()*(2*offset+1)) - offset
	ms := math.Max(initial, math.Min(b+jitter, maxMs))
	return time.Duration(ms) * time.Millisecond
}

// String implements Policy.
func (p *ExponentialDelay) String() string {
	s := p.Settings
	return fmt.Sprintf("exponential-delay (initial %s, max %s, multiplier %g, jitter %g, reset after %s; %d restarts since the last reset)",
		s.InitialBackoff, s.MaxBackoff, s.Multiplier, s.JitterFactor, s.ResetThreshold, p.attempt)
}

package restart

import (
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

// FailureRate restarts Delay after each failure unless more than MaxFailures failures fell
// within Interval, counting this one (Flink's FailureRateRestartBackoffTimeStrategy: it
// keeps the times of the last MaxFailures+1 failures, and fails the job when the oldest of
// them is no more than Interval ago).
type FailureRate struct {
	// MaxFailures is restart-strategy.failure-rate.max-failures-per-interval.
	MaxFailures int
	// Interval is restart-strategy.failure-rate.failure-rate-interval.
	Interval time.Duration
	// Delay is restart-strategy.failure-rate.delay.
	Delay time.Duration
	// Clock tells the time of each failure.
	Clock Clock
	times []time.Time
}

// Failed implements Policy.
func (p *FailureRate) Failed() Decision {
	now := p.Clock.Now()
	if len(p.times) > p.MaxFailures {
		p.times = p.times[1:]
	}
	p.times = append(p.times, now)
	if len(p.times) > p.MaxFailures && now.Sub(p.times[0]) <= p.Interval {
		return Decision{Reason: fmt.Sprintf("%d failures within %s exceed %s (%d) in %s (%s)", len(p.times), now.Sub(p.times[0]).Round(time.Millisecond),
			config.KeyFailureRateMax, p.MaxFailures, config.KeyFailureRateInterval, p.Interval)}
	}
	return Decision{Restart: true, Delay: p.Delay}
}

// String implements Policy.
func (p *FailureRate) String() string {
	return fmt.Sprintf("failure-rate (at most %d failures per %s, delay %s)", p.MaxFailures, p.Interval, p.Delay)
}

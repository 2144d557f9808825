package restart

import (
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

// FixedDelay restarts at most Attempts times in a run, Delay after each failure (Flink's
// FixedDelayRestartBackoffTimeStrategy: the count never resets).
type FixedDelay struct {
	// Attempts is restart-strategy.fixed-delay.attempts.
	Attempts int
	// Delay is restart-strategy.fixed-delay.delay.
	Delay    time.Duration
	failures int
}

// Failed implements Policy.
func (p *FixedDelay) Failed() Decision {
	p.failures++
	if p.failures > p.Attempts {
		return Decision{Reason: fmt.Sprintf("%s is %d and the job failed %s", config.KeyRestartAttempts, p.Attempts, times(p.failures))}
	}
	return Decision{Restart: true, Delay: p.Delay}
}

// String implements Policy.
func (p *FixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (attempts %d, delay %s; %d failures so far)", p.Attempts, p.Delay, p.failures)
}

// Package restart decides, after each failure of a job, whether the runner restarts it and
// how long it waits first: Apache Flink's restart strategies (fixed-delay, failure-rate,
// exponential-delay and none), with Flink's semantics, one Policy type per strategy. A
// policy lives as long as one run of the job; time comes from an injected Clock.
//
// It also owns the mark of the failures no restart can fix (Permanent, IsPermanent): the
// engine (runtime/dataflow), the connectors and the runner mark such errors where they
// find them, and the runner fails the job on a marked error without asking the policy.
//
// restart sits below everything that fails a job: it imports nothing of the repository but
// the configuration's types (runtime/config), and must never import the engine
// (runtime/dataflow), the runner (runtime/runner), the monitor (runtime/monitor), the
// plugin host (runtime/pluginhost) or cmd/..., which all import it.
package restart

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
)

// Clock tells the time. Tests inject their own; the runner uses System.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// System is the wall clock.
var System Clock = systemClock{}

// Decision is what a policy decides about one failure.
type Decision struct {
	// Restart is false when the job must fail instead.
	Restart bool
	// Delay is how long to wait before restarting.
	Delay time.Duration
	// Reason says why the job must fail, naming the configuration key that decided it;
	// empty when Restart is true.
	Reason string
}

// Policy is a restart strategy's state over one run of a job.
type Policy interface {
	// Failed records a failure that happened now and decides what follows.
	Failed() Decision
	// String names the strategy and its settings, for logs.
	String() string
}

// New returns the policy of the configured strategy. random returns numbers in [0, 1) for
// exponential-delay's jitter; nil uses math/rand.
func New(r config.Restart, clock Clock, random func() float64) Policy {
	if clock == nil {
		clock = System
	}
	if random == nil {
		random = rand.Float64
	}
	switch r.Type {
	case config.RestartFixedDelay:
		return &FixedDelay{Attempts: r.Attempts, Delay: r.Delay}
	case config.RestartFailureRate:
		return &FailureRate{MaxFailures: r.FailureRate.MaxFailures, Interval: r.FailureRate.Interval, Delay: r.FailureRate.Delay, Clock: clock}
	case config.RestartExponentialDelay:
		return &ExponentialDelay{Settings: r.ExponentialDelay, Clock: clock, Random: random}
	}
	return None{}
}

// None never restarts (restart-strategy.type: none).
type None struct{}

// Failed implements Policy.
func (None) Failed() Decision {
	return Decision{Reason: config.KeyRestartType + " is " + config.RestartNone}
}

// String implements Policy.
func (None) String() string { return config.RestartNone }

// times says "once" or "N times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

package config

import (
	"fmt"
	"strings"
	"time"
)

// restartStrategies are the strategies with keys of their own, in the order messages name
// them.
var restartStrategies = []string{RestartFixedDelay, RestartFailureRate, RestartExponentialDelay}

// restartStrategyOf returns the strategy a restart-strategy.<strategy>.* key belongs to, ""
// for other keys.
func restartStrategyOf(key string) string {
	for _, s := range restartStrategies {
		if strings.HasPrefix(key, "restart-strategy."+s+".") {
			return s
		}
	}
	return ""
}

// setRestart applies a restart-strategy.* key, checking the bounds Flink's restart
// strategies check.
func (p *parser) setRestart(key string, v any) {
	r := &p.c.Restart
	switch key {
	case KeyRestartType:
		r.Type, p.restartGiven = v.(string), true
	case KeyRestartAttempts:
		r.Attempts, p.attemptsGiven = int(v.(int64)), true
	case KeyRestartDelay:
		r.Delay = v.(time.Duration)
	case KeyFailureRateMax:
		r.FailureRate.MaxFailures = int(v.(int64))
	case KeyFailureRateInterval:
		r.FailureRate.Interval = p.positive(key, v.(time.Duration))
	case KeyFailureRateDelay:
		r.FailureRate.Delay = v.(time.Duration)
	case KeyExpInitialBackoff:
		r.ExponentialDelay.InitialBackoff = p.positive(key, v.(time.Duration))
	case KeyExpMaxBackoff:
		r.ExponentialDelay.MaxBackoff = p.positive(key, v.(time.Duration))
	case KeyExpResetThreshold:
		r.ExponentialDelay.ResetThreshold = p.positive(key, v.(time.Duration))
	case KeyExpMultiplier:
		if r.ExponentialDelay.Multiplier = v.(float64); r.ExponentialDelay.Multiplier <= 1 {
			p.badValue(key, "want a number greater than 1")
		}
	case KeyExpJitter:
		if r.ExponentialDelay.JitterFactor = v.(float64); r.ExponentialDelay.JitterFactor > 1 {
			p.badValue(key, "want a number from 0 to 1")
		}
	case KeyExpAttempts:
		r.ExponentialDelay.AttemptsBeforeReset = int(v.(int64))
	}
}

// positive returns d, reporting a bad value of key when d is under a millisecond (Flink's
// restart strategies want at least 1 ms).
func (p *parser) positive(key string, d time.Duration) time.Duration {
	if d < time.Millisecond {
		p.badValue(key, "want at least 1ms")
	}
	return d
}

// finishRestart picks the restart strategy. Without restart-strategy.type, the keys of one
// strategy select it (Flink would ignore them and use its default; a note says so), keys of
// several are an error, and no keys at all leave Flink's default, decided by Resolve once
// the checkpoint interval is final. Keys of a strategy that is not the one selected are
// ignored with a warning.
func (p *parser) finishRestart() {
	c := p.c
	var given []string
	for _, s := range restartStrategies {
		if len(p.restartKeys[s]) > 0 {
			given = append(given, s)
		}
	}
	switch {
	case p.restartGiven:
		for _, s := range given {
			if s == c.Restart.Type {
				continue
			}
			for _, k := range p.restartKeys[s] {
				c.warnf("%s%s is ignored: %s is %s", p.at(k.leaf), k.key, KeyRestartType, c.Restart.Type)
			}
		}
	case len(given) == 1:
		c.Restart.Type = given[0]
		p.note(p.restartKeys[given[0]][0].leaf, fmt.Sprintf("%s is not set, so the restart-strategy.%s.* keys select %s (Flink would ignore them "+
			"and use its default: exponential-delay with checkpointing, else none)", KeyRestartType, given[0], given[0]))
	case len(given) > 1:
		a, b := p.restartKeys[given[0]][0], p.restartKeys[given[1]][0]
		p.errs.addAt(c.File, b.leaf, fmt.Errorf("%w: %s is not set, and both %s (%s, %s) and %s keys are: set %s to choose",
			ErrConflict, KeyRestartType, given[0], a.key, p.origin(a.leaf), given[1], KeyRestartType))
	default:
		c.restartDefault = true
	}
	if e := c.Restart.ExponentialDelay; c.Restart.Type == RestartExponentialDelay && e.InitialBackoff > e.MaxBackoff {
		key := KeyExpInitialBackoff
		if p.raw[key] == "" {
			key = KeyExpMaxBackoff
		}
		p.badValue(key, fmt.Sprintf("%s (%s) exceeds %s (%s)", KeyExpInitialBackoff, e.InitialBackoff, KeyExpMaxBackoff, e.MaxBackoff))
	}
}

// DefaultRestartStrategy is Flink's restart strategy when none is configured:
// RestartExponentialDelay when checkpointing is enabled (a checkpoint interval is set), else
// RestartNone.
func DefaultRestartStrategy(interval time.Duration) string {
	if interval > 0 {
		return RestartExponentialDelay
	}
	return RestartNone
}

package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// median returns the median of xs (NaN for none).
func median(xs []float64) float64 { return percentile(xs, 50) }

// percentile returns the p-th percentile of xs by the nearest-rank method (NaN for none):
// the smallest sample with at least p% of the samples at or below it.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// roundRatios returns a[i]/b[i] for the rounds both have.
func roundRatios(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = ratio(a[i], b[i])
	}
	return out
}

// pairedRatio is the median of a[i]/b[i] over the rounds both have: the ratio of two
// variants measured back to back in each round. A VM's speed drifts by 10-30% from one
// second to the next, and moves both variants of a round alike, so the rounds' own ratios
// cancel it where a ratio of the two variants' medians, each taken from other rounds, does
// not.
func pairedRatio(a, b []float64) float64 { return median(roundRatios(a, b)) }

// minOf returns the smallest of xs (NaN for none); maxOf the largest.
func minOf(xs []float64) float64 { return percentile(xs, 0) }
func maxOf(xs []float64) float64 { return percentile(xs, 100) }

// durationsMs turns durations into milliseconds.
func durationsMs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// mbps is bytes per elapsed time in MB/s (10^6 bytes).
func mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return float64(bytes) / 1e6 / d.Seconds()
}

// ratio is a/b, NaN when b is not positive.
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return math.NaN()
	}
	return a / b
}

// human formats n with a k/M suffix.
func human(n float64) string {
	switch {
	case math.IsNaN(n):
		return "n/a"
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk", n/1e3)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// bytesHuman formats a byte count in MB or GB (10^6, 10^9).
func bytesHuman(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// target is a goal from issue 7 and whether a figure meets it.
type target struct {
	text string // for example ">= 0.5x"
	met  bool
	ok   bool // the figure exists
}

// atLeast checks v >= goal.
func atLeast(v, goal float64, text string) target {
	return target{text: text, met: v >= goal, ok: !math.IsNaN(v)}
}

// atMost checks v <= goal.
func atMost(v, goal float64, text string) target {
	return target{text: text, met: v <= goal, ok: !math.IsNaN(v)}
}

// verdict is PASS, MISS, or PENDING when there is no figure.
func (t target) verdict() string {
	switch {
	case !t.ok:
		return "PENDING"
	case t.met:
		return "PASS"
	}
	return "MISS"
}

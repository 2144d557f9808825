package monitor

import (
	"math"
	"slices"
)

// quantileWindow is how many of the most recent values the quantiles of a series are
// computed over; minimum, maximum and average cover every value.
const quantileWindow = 1000

// series sums up a series of values as Flink's StatsSummary does.
type series struct {
	n, sum, min, max int64
	recent           []int64 // the last quantileWindow values, oldest first
}

func (s *series) add(v int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
	if len(s.recent) == quantileWindow {
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, v)
}

// summary returns the series in Flink's shape; all zero when it is empty.
func (s *series) summary() StatsSummary {
	if s.n == 0 {
		return StatsSummary{}
	}
	sorted := slices.Clone(s.recent)
	slices.Sort(sorted)
	return StatsSummary{
		Min: s.min, Max: s.max, Avg: s.sum / s.n,
		P50: quantile(sorted, .5), P90: quantile(sorted, .9), P95: quantile(sorted, .95),
		P99: quantile(sorted, .99), P999: quantile(sorted, .999),
	}
}

// quantile returns the p-quantile of sorted values, estimated as Apache Commons Math's
// Percentile does by default (the estimator behind Flink's histogram statistics): the
// position p*(n+1), interpolated between its neighbours.
func quantile(sorted []int64, p float64) float64 {
	n := len(sorted)
	pos := p * float64(n+1)
	switch {
	case pos < 1:
		return float64(sorted[0])
	case pos >= float64(n):
		return float64(sorted[n-1])
	}
	lower := math.Floor(pos)
	lo, hi := float64(sorted[int(lower)-1]), float64(sorted[int(lower)])
	return lo + (pos-lower)*(hi-lo)
}

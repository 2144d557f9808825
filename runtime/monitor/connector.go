package monitor

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// commitBuckets span a sink's commit: from a millisecond for a small batch on a local
// server to tens of seconds for a large one across a slow link.
var commitBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// connectorStats are what a subtask's connector measured (dataflow.ConnectorEvents): the
// lag of a source's splits and the commits of a sink.
type connectorStats struct {
	emitLag atomic.Int64 // nanoseconds; -1: no record emitted with a time yet

	mu      sync.Mutex
	splits  map[string]int64
	commits commitStats
}

// commitStats count a sink subtask's commits and the histogram of their durations.
type commitStats struct {
	n, records, batches int64
	last                time.Duration
	sum                 float64  // seconds
	buckets             []uint64 // per commitBuckets bound, not cumulative
}

// SplitPending records the records split still has to read past the last the subtask
// emitted (Flink's pendingRecords).
func (s *Subtask) SplitPending(split string, pending int64) {
	if s == nil {
		return
	}
	c := &s.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.splits == nil {
		c.splits = map[string]int64{}
	}
	c.splits[split] = pending
}

// EmitEventTimeLag records how long before its emission the last record the subtask
// emitted was stored in its input (Flink's currentEmitEventTimeLag).
func (s *Subtask) EmitEventTimeLag(lag time.Duration) {
	if s != nil {
		s.conn.emitLag.Store(int64(max(lag, 0)))
	}
}

// Committed records a commit of records in batches that took d.
func (s *Subtask) Committed(records, batches int, d time.Duration) {
	if s == nil {
		return
	}
	c := &s.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := &c.commits
	if cs.buckets == nil {
		cs.buckets = make([]uint64, len(commitBuckets))
	}
	cs.n++
	cs.records += int64(records)
	cs.batches += int64(batches)
	cs.last = d
	sec := d.Seconds()
	cs.sum += sec
	if i, _ := slices.BinarySearch(commitBuckets, sec); i < len(commitBuckets) {
		cs.buckets[i]++
	}
}

// connectorMetrics returns what s's connector measured, nil when it measured nothing.
func (s *Subtask) connectorMetrics() *ConnectorMetrics {
	c := &s.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	lag := c.emitLag.Load()
	if c.splits == nil && c.commits.n == 0 && lag < 0 {
		return nil
	}
	cm := &ConnectorMetrics{CurrentEmitEventTimeLag: -1}
	if lag >= 0 {
		cm.CurrentEmitEventTimeLag = time.Duration(lag).Milliseconds()
	}
	if c.splits != nil {
		cm.PendingRecords = new(int64)
		for split, n := range c.splits {
			cm.Splits = append(cm.Splits, SplitMetrics{Split: split, PendingRecords: n})
			*cm.PendingRecords += n
		}
		slices.SortFunc(cm.Splits, func(a, b SplitMetrics) int { return cmp.Compare(a.Split, b.Split) })
	}
	if cs := c.commits; cs.n > 0 {
		cm.Commits = &CommitMetrics{Commits: cs.n, Records: cs.records, Batches: cs.batches,
			LastLatency: cs.last.Milliseconds(), AverageLatency: int64(cs.sum * 1000 / float64(cs.n))}
	}
	return cm
}

// cumulativeBuckets returns the commit histogram as Prometheus wants it; c.mu is held.
func (cs *commitStats) cumulativeBuckets() map[float64]uint64 {
	out := make(map[float64]uint64, len(commitBuckets))
	var n uint64
	for i, b := range commitBuckets {
		n += cs.buckets[i]
		out[b] = n
	}
	return out
}

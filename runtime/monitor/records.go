package monitor

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"
)

// meterWindow is the span numRecordsInPerSecond averages over, and meterSampleInterval how
// often the counters are sampled: Flink's MeterView defaults (60 s, updated every 5 s).
const (
	meterWindow         = 60 * time.Second
	meterSampleInterval = 5 * time.Second
)

type subtaskKey struct {
	op  string
	idx int
}

// Subtask counts the records of one operator subtask. The runtime's task holds it and
// adds to it as records pass; its methods are safe for concurrent use and cost an atomic
// add. A nil *Subtask does nothing.
type Subtask struct {
	in, out   atomic.Int64
	stateSize atomic.Int64 // -1: unknown
	inMeter   meter
	outMeter  meter
	conn      connectorStats
}

// Subtask returns the counters of subtask index of operator op, creating them the first
// time. The same counters are returned for every attempt of the job, so counts go on
// across restarts (records replayed after a recovery are counted again).
func (m *Monitor) Subtask(op string, index int) *Subtask {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := subtaskKey{op, index}
	s := m.subtasks[k]
	if s == nil {
		now := m.now()
		s = &Subtask{inMeter: newMeter(now), outMeter: newMeter(now)}
		s.stateSize.Store(-1)
		s.conn.emitLag.Store(-1)
		m.subtasks[k] = s
		m.noteOperator(op)
	}
	return s
}

// noteOperator remembers the order operators first appeared in.
func (m *Monitor) noteOperator(op string) {
	for _, o := range m.opOrder {
		if o == op {
			return
		}
	}
	m.opOrder = append(m.opOrder, op)
}

// RecordsIn counts n records the subtask took in (Flink's numRecordsIn).
func (s *Subtask) RecordsIn(n int) {
	if s != nil {
		s.in.Add(int64(n))
	}
}

// RecordsOut counts n records the subtask emitted (Flink's numRecordsOut).
func (s *Subtask) RecordsOut(n int) {
	if s != nil {
		s.out.Add(int64(n))
	}
}

// SetStateSize records the bytes of the subtask's keyed backend, when the backend can tell.
func (s *Subtask) SetStateSize(bytes int64) {
	if s != nil {
		s.stateSize.Store(bytes)
	}
}

// meter turns a counter into a rate over the last meterWindow, sampled every
// meterSampleInterval: Flink's MeterView. Until the counter is meterWindow old, the
// window reaches back before it started, where the count was 0, so the rate is the count
// divided by the window, as in Flink. Between samples (Monitor.Run not running) the rate
// is the average since the newest sample at or before the window's start.
type meter struct {
	// samples are oldest first; once the counter is older than the window, samples[0] is
	// the newest at or before its start. The first is the counter's creation, at 0.
	samples []sample
}

func newMeter(now time.Time) meter { return meter{samples: []sample{{now, 0}}} }

type sample struct {
	at    time.Time
	count int64
}

// observe records count at now, at most once per meterSampleInterval, and forgets the
// samples the window no longer needs.
func (mt *meter) observe(now time.Time, count int64) {
	if n := len(mt.samples); n == 0 || now.Sub(mt.samples[n-1].at) >= meterSampleInterval {
		mt.samples = append(mt.samples, sample{now, count})
	}
	from := now.Add(-meterWindow)
	for len(mt.samples) > 1 && !mt.samples[1].at.After(from) {
		mt.samples = mt.samples[1:]
	}
}

// rate returns the records per second over the window ending at now, where the count is
// count.
func (mt *meter) rate(now time.Time, count int64) float64 {
	mt.observe(now, count)
	s := mt.samples[0]
	if s.at.After(now.Add(-meterWindow)) {
		return float64(count) / meterWindow.Seconds()
	}
	return float64(count-s.count) / now.Sub(s.at).Seconds()
}

// sampleLocked samples every subtask's counters at now; m.mu is held.
func (m *Monitor) sampleLocked(now time.Time) {
	for _, s := range m.subtasks {
		s.inMeter.observe(now, s.in.Load())
		s.outMeter.observe(now, s.out.Load())
	}
}

// subtaskMetrics returns the counts and rates of every subtask of op at now, by index; m.mu
// is held.
func (m *Monitor) subtaskMetrics(op string, now time.Time) []SubtaskMetrics {
	var out []SubtaskMetrics
	for k, s := range m.subtasks {
		if k.op != op {
			continue
		}
		in, o := s.in.Load(), s.out.Load()
		out = append(out, SubtaskMetrics{
			Subtask: k.idx, ReadRecords: in, WriteRecords: o,
			ReadRecordsPerSecond: s.inMeter.rate(now, in), WriteRecordsPerSecond: s.outMeter.rate(now, o),
			StateSize: s.stateSize.Load(), Connector: s.connectorMetrics(),
		})
	}
	slices.SortFunc(out, func(a, b SubtaskMetrics) int { return cmp.Compare(a.Subtask, b.Subtask) })
	return out
}

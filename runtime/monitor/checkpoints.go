package monitor

import (
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// checkpointType is the name Flink's REST API gives a checkpoint of kind k.
func checkpointType(k dataflow.CheckpointKind) string {
	switch k {
	case dataflow.KindSavepoint:
		return TypeSavepoint
	case dataflow.KindSyncSavepoint:
		return TypeSyncSavepoint
	}
	return TypeCheckpoint
}

// CheckpointTriggered records that checkpoint id was triggered at at (the Monitor's clock
// when zero).
func (m *Monitor) CheckpointTriggered(id int64, kind dataflow.CheckpointKind, at time.Time) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.get(id, m.at(at))
	c.kind = kind
	c.tasks = m.info.Tasks
}

// CheckpointUploaded adds n to the bytes checkpoint id has written to the checkpoint
// storage so far.
func (m *Monitor) CheckpointUploaded(id int64, n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.cps.byID[id]; c != nil {
		c.uploaded += n
	}
}

// SubtaskAcknowledged records subtask's acknowledgement of checkpoint id in task (the id of
// the operator heading it). Acknowledgements of checkpoints no longer in progress are
// ignored.
func (m *Monitor) SubtaskAcknowledged(id int64, task string, subtask int, ack dataflow.AckStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.byID[id]
	if c == nil || c.status != StatusInProgress {
		return
	}
	ack.At = m.at(ack.At)
	if c.acks[task] == nil {
		c.acks[task] = map[int]dataflow.AckStats{}
	}
	c.acks[task][subtask] = ack
	if ack.At.After(c.latestAck) {
		c.latestAck = ack.At
	}
}

// CheckpointCompleted records that checkpoint id completed at at (its metadata is
// published).
func (m *Monitor) CheckpointCompleted(id int64, at time.Time, done dataflow.CompletedStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.end(id, at, StatusCompleted)
	if c == nil {
		return
	}
	m.cps.counts.Completed++
	c.stateSize, c.checkpointedSize, c.path = done.StateSize, done.CheckpointedSize, done.ExternalPath
	m.cps.durations.add(c.duration())
	m.cps.stateSizes.add(c.stateSize)
	m.cps.checkpointedSizes.add(c.checkpointedSize)
	if c.kind == dataflow.KindCheckpoint {
		m.cps.latestCompleted = c
	} else {
		m.cps.latestSavepoint = c
	}
}

// CheckpointFailed records that checkpoint id failed (declined, expired, or its metadata
// could not be published) at at, and why.
func (m *Monitor) CheckpointFailed(id int64, at time.Time, reason string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.end(id, at, StatusFailed)
	if c == nil {
		return
	}
	m.cps.counts.Failed++
	c.failure = reason
	c.stateSize, c.checkpointedSize = c.ackedSizes()
	m.cps.latestFailed = c
}

// end moves checkpoint id, in progress, to status at at (the clock when zero), and returns
// it; nil when it had already ended. A checkpoint the Monitor never heard of counts as
// triggered at at. m.mu is held.
func (m *Monitor) end(id int64, at time.Time, status string) *cpStats {
	at = m.at(at)
	c := m.cps.get(id, at)
	if c.status != StatusInProgress {
		return nil
	}
	m.cps.counts.InProgress--
	c.status, c.end = status, at
	return c
}

// CheckpointDiscarded records that retention disposed of completed checkpoint id.
func (m *Monitor) CheckpointDiscarded(id int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range []*cpStats{m.cps.byID[id], m.cps.latestCompleted, m.cps.latestSavepoint} {
		if c != nil && c.id == id && c.status == StatusCompleted {
			c.discarded = true
		}
	}
}

// RestoredFrom records that the job was restored at at from checkpoint (or savepoint) id
// at pointer.
func (m *Monitor) RestoredFrom(id int64, at time.Time, pointer string, savepoint bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cps.counts.Restored++
	m.cps.restored = &RestoredCheckpoint{ID: id, RestoreTimestamp: millis(m.at(at)), IsSavepoint: savepoint, ExternalPath: pointer}
}

// at returns t, or the Monitor's clock when t is zero.
func (m *Monitor) at(t time.Time) time.Time {
	if t.IsZero() {
		return m.now()
	}
	return t
}

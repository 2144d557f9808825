package monitor

import (
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// Kind says what a checkpoint is.
type Kind int

const (
	// Checkpoint is a periodic (or final) checkpoint.
	Checkpoint Kind = iota
	// Savepoint is a savepoint the job goes on after.
	Savepoint
	// SyncSavepoint is a savepoint that stops the job (stop --savepoint).
	SyncSavepoint
)

func (k Kind) checkpointType() string {
	switch k {
	case Savepoint:
		return TypeSavepoint
	case SyncSavepoint:
		return TypeSyncSavepoint
	}
	return TypeCheckpoint
}

// Ack is one subtask's acknowledgement of a checkpoint, as the coordinator receives it.
type Ack struct {
	// At is when the acknowledgement arrived; the Monitor's clock when zero.
	At time.Time
	// Sync is the synchronous part of the subtask's snapshot (processing paused), Async the
	// upload that followed while processing went on.
	Sync, Async time.Duration
	// Alignment is the time from the checkpoint's first barrier reaching the subtask to
	// the last (0 for a subtask with one input).
	Alignment time.Duration
	// StartDelay is the time from the trigger to the first barrier reaching the subtask,
	// when the runtime measures it.
	StartDelay time.Duration
	// StateSize is the bytes of state the subtask's part references; CheckpointedSize the
	// bytes it uploaded for this checkpoint (less for an incremental snapshot).
	StateSize, CheckpointedSize int64
}

// Completed describes a completed checkpoint.
type Completed struct {
	// StateSize is the whole state the checkpoint references (Metadata.StateSize);
	// CheckpointedSize what this checkpoint uploaded (Metadata.AddedBytes).
	StateSize, CheckpointedSize int64
	// ExternalPath is the checkpoint's pointer.
	ExternalPath string
}

// CompletedFrom describes the completed checkpoint whose metadata is m and pointer
// pointer, with the sizes `runner checkpoints list` shows for it.
func CompletedFrom(m *checkpoint.Metadata, pointer string) Completed {
	return Completed{StateSize: m.StateSize(), CheckpointedSize: m.AddedBytes, ExternalPath: pointer}
}

// CheckpointTriggered records that checkpoint id was triggered at at (the Monitor's clock
// when zero).
func (m *Monitor) CheckpointTriggered(id int64, kind Kind, at time.Time) {
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
func (m *Monitor) SubtaskAcknowledged(id int64, task string, subtask int, ack Ack) {
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
		c.acks[task] = map[int]Ack{}
	}
	c.acks[task][subtask] = ack
	if ack.At.After(c.latestAck) {
		c.latestAck = ack.At
	}
}

// CheckpointCompleted records that checkpoint id completed at at (its metadata is
// published).
func (m *Monitor) CheckpointCompleted(id int64, at time.Time, done Completed) {
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
	if c.kind == Checkpoint {
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

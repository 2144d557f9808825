package dataflow

import (
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// Events receives what a run reports as it goes: the progress of every checkpoint and the
// record counts and state sizes of every subtask. The runner passes the job's monitor
// (runtime/monitor's Monitor.Events), so the engine reports to it without importing it;
// without Events (nil), a run reports nothing. The methods are called from the subtasks'
// goroutines and the coordinator's at once; they must be safe for concurrent use and must
// not block.
type Events interface {
	// CheckpointTriggered reports that checkpoint id, of kind kind, was triggered at at.
	CheckpointTriggered(id int64, kind CheckpointKind, at time.Time)
	// CheckpointUploaded reports that checkpoint id wrote n more bytes to the checkpoint
	// storage.
	CheckpointUploaded(id int64, n int64)
	// SubtaskAcknowledged reports subtask's acknowledgement of checkpoint id in task (the
	// id of the operator heading it).
	SubtaskAcknowledged(id int64, task string, subtask int, ack AckStats)
	// CheckpointCompleted reports that checkpoint id completed at at: its metadata is
	// published.
	CheckpointCompleted(id int64, at time.Time, done CompletedStats)
	// CheckpointFailed reports that checkpoint id failed at at (it was declined, expired,
	// subsumed, or its location or metadata could not be written), and why.
	CheckpointFailed(id int64, at time.Time, reason string)
	// Subtask returns what receives the record counts and the state size of subtask index
	// of operator op. A run asks once per subtask and attempt.
	Subtask(op string, index int) SubtaskEvents
}

// SubtaskEvents receives the record counts and the state size of one subtask; its methods
// are called as records pass, so they must be cheap.
type SubtaskEvents interface {
	// RecordsIn counts n more records the subtask took in.
	RecordsIn(n int)
	// RecordsOut counts n more records the subtask emitted.
	RecordsOut(n int)
	// SetStateSize reports the bytes of keyed state the subtask holds, as the latest
	// completed checkpoint has them.
	SetStateSize(bytes int64)
	ConnectorEvents
}

// ConnectorEvents receives what a source's reader or a sink's writer measures of its
// connector, in the shape of Flink's connector metrics. A reader or writer that implements
// Measured is given its subtask's after Open. The methods must be cheap and must not
// block.
type ConnectorEvents interface {
	// SplitPending reports the records a split of the source subtask still has to read
	// past the last it emitted (Flink's pendingRecords, per split).
	SplitPending(split string, pending int64)
	// EmitEventTimeLag reports how long before its emission the last record the source
	// subtask emitted was stored in its input (Flink's currentEmitEventTimeLag).
	EmitEventTimeLag(lag time.Duration)
	// Committed reports that the sink subtask made records visible in batches, taking d.
	Committed(records, batches int, d time.Duration)
}

// Measured is a SourceReader or SinkWriter that measures its connector: the run calls
// Measure once after Open, with the ConnectorEvents of the subtask, before any other
// method.
type Measured interface {
	Measure(ConnectorEvents)
}

// measure hands x the connector events of its subtask when it measures itself.
func measure(x any, ev ConnectorEvents) {
	if m, ok := x.(Measured); ok {
		m.Measure(ev)
	}
}

// CheckpointKind says what a checkpoint is.
type CheckpointKind int

const (
	// KindCheckpoint is a periodic (or final) checkpoint.
	KindCheckpoint CheckpointKind = iota
	// KindSavepoint is a savepoint the job goes on after.
	KindSavepoint
	// KindSyncSavepoint is a savepoint that stops the job (stop --savepoint).
	KindSyncSavepoint
)

// AckStats are one subtask's acknowledgement of a checkpoint, as the coordinator receives
// it.
type AckStats struct {
	// At is when the acknowledgement arrived; the receiver's clock when zero.
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

// CompletedStats describe a completed checkpoint.
type CompletedStats struct {
	// StateSize is the whole state the checkpoint references (Metadata.StateSize);
	// CheckpointedSize what this checkpoint uploaded (Metadata.AddedBytes).
	StateSize, CheckpointedSize int64
	// ExternalPath is the checkpoint's pointer.
	ExternalPath string
}

// CompletedStatsFrom describes the completed checkpoint whose metadata is m and pointer
// pointer, with the sizes `runner checkpoints list` shows for it.
func CompletedStatsFrom(m *checkpoint.Metadata, pointer string) CompletedStats {
	return CompletedStats{StateSize: m.StateSize(), CheckpointedSize: m.AddedBytes, ExternalPath: pointer}
}

// noEvents is the Events of a run without any: it reports nothing.
type noEvents struct{}

func (noEvents) CheckpointTriggered(int64, CheckpointKind, time.Time) {}
func (noEvents) CheckpointUploaded(int64, int64)                      {}
func (noEvents) SubtaskAcknowledged(int64, string, int, AckStats)     {}
func (noEvents) CheckpointCompleted(int64, time.Time, CompletedStats) {}
func (noEvents) CheckpointFailed(int64, time.Time, string)            {}
func (noEvents) Subtask(string, int) SubtaskEvents                    { return noEvents{} }
func (noEvents) RecordsIn(int)                                        {}
func (noEvents) RecordsOut(int)                                       {}
func (noEvents) SetStateSize(int64)                                   {}
func (noEvents) SplitPending(string, int64)                           {}
func (noEvents) EmitEventTimeLag(time.Duration)                       {}
func (noEvents) Committed(int, int, time.Duration)                    {}

package dataflow

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// Env is what one run of a job needs from the runner.
type Env struct {
	// Backend keeps the keyed state.
	Backend sdk.StateBackend
	// BackendName is the backend plugin's name, recorded in checkpoints.
	BackendName string
	// Checkpoints holds the retained checkpoints and the storage access.
	Checkpoints *checkpoint.Store
	// Restore is the checkpoint to start from, or nil for a fresh start.
	Restore *checkpoint.Metadata
	// Interval between periodic checkpoints; 0 means only the final checkpoint of a
	// bounded job.
	Interval time.Duration
	// Timeout after which a checkpoint that has not completed is aborted.
	Timeout time.Duration
	// AtLeastOnce selects at-least-once checkpoints (Flink's execution.checkpointing.mode
	// AT_LEAST_ONCE): a keyed subtask keeps processing the inputs whose barrier arrived
	// and takes its snapshot once the barrier arrived on every input, so no input is held
	// back, but after a failure some records may be processed twice. False (the default)
	// is EXACTLY_ONCE: barriers are aligned, and no record that follows a barrier is part
	// of that barrier's snapshot.
	AtLeastOnce bool
	// TolerableFailures is the number of consecutive failed checkpoints the job survives.
	TolerableFailures int
	// MinPause is the least time between the completion of a checkpoint and the trigger of
	// the next periodic one (Flink's execution.checkpointing.min-pause); 0: none.
	MinPause time.Duration
	// MaxConcurrent is how many checkpoints may be in flight at once (Flink's
	// execution.checkpointing.max-concurrent-checkpoints); 0 means 1.
	MaxConcurrent int
	// FullFirstCheckpoint makes the keyed subtasks take full snapshots
	// (sdk.SnapshotOptions.Full), referencing no file of an earlier checkpoint, until a
	// checkpoint of the attempt completes: the run does not own the restored checkpoint
	// (claim mode NO_CLAIM), so nothing it keeps may depend on that checkpoint's files.
	FullFirstCheckpoint bool
	// Savepoints receives savepoint requests while the job runs (may be nil).
	Savepoints <-chan SavepointRequest
	// Events, if set, receives the checkpoints' events (triggered, acknowledged,
	// completed, failed) and the record counts of every subtask (the runner passes the
	// job's monitor); nil: the run reports nothing.
	Events Events
	// RestoreProgress, if set, makes what shows the progress of a restore of total bytes
	// of keyed state.
	RestoreProgress func(total int64) Progress
	// Logger receives progress and warnings.
	Logger hclog.Logger
	// OnCheckpoint, if set, is called after each checkpoint completes.
	OnCheckpoint func(c *checkpoint.Completed)
	// Stats, if set, receives the state access counts when the run ends.
	Stats *RunStats
	// CancellationTimeout, when positive, bounds the attempt's teardown: once the attempt
	// has been cancelled (failed, stopped or finished), Run calls OnCancellationTimeout
	// each time another CancellationTimeout passes without the subtasks and the state they
	// opened being released, with n = 1, 2, ... The runner kills the plugin processes that
	// hold the teardown up (Flink's task.cancellation.timeout kills the TaskManager).
	CancellationTimeout   time.Duration
	OnCancellationTimeout func(n int)
	// Fence, if set, is called right before each commit: before the coordinator publishes
	// a checkpoint's metadata, before a sink subtask commits, and before a sink subtask
	// opens (which commits the restored transactions and discards the uncommitted ones).
	// An error stops that commit and fails the attempt. The runner passes its owner's
	// check (runtime/ownership's Owner.Check), so a runner that lost its job commits
	// nothing more.
	Fence func() error
	// Epoch, if set, returns the lease epoch at which the run holds its job (runtime/ownership's
	// Owner.Epoch, the fencing token a takeover raises by one); the coordinator records it in
	// every checkpoint's metadata, so that `--from latest` prefers a successor's checkpoints
	// to the late ones of a runner that lost the job (checkpoint.Newer). Unset: epoch 0.
	Epoch func() int64
}

// Progress shows the progress of an operation that moves bytes (runtime/progress's
// Progress is one).
type Progress interface {
	// Add counts n more bytes done.
	Add(n int64)
	// Finish ends the operation, with its error (nil: done).
	Finish(err error)
}

// noProgress shows nothing.
type noProgress struct{}

func (noProgress) Add(int64)    {}
func (noProgress) Finish(error) {}

// RunStats sum the state backend calls of every keyed subtask, and time the checkpoints.
type RunStats struct {
	state.Stats
	// Checkpoints counts completed checkpoints; FailedCheckpoints declined or expired ones.
	Checkpoints, FailedCheckpoints int
	// SnapshotPauses are the synchronous parts of the keyed subtasks' snapshots: the time
	// each subtask spent inside KeyedStateBackend.Snapshot (across the plugin boundary when
	// the backend is a plugin), one per keyed subtask and checkpoint.
	SnapshotPauses []time.Duration
	// CheckpointDurations are the times from trigger to published metadata of the
	// completed checkpoints, in completion order.
	CheckpointDurations []time.Duration
	// FirstRecord is when the first keyed subtask started processing its first batch;
	// zero when none did.
	FirstRecord time.Time
}

// Add adds the counts and samples of o to s; FirstRecord keeps the earlier time.
func (s *RunStats) Add(o *RunStats) {
	s.Stats.Add(o.Stats)
	s.Checkpoints += o.Checkpoints
	s.FailedCheckpoints += o.FailedCheckpoints
	s.SnapshotPauses = append(s.SnapshotPauses, o.SnapshotPauses...)
	s.CheckpointDurations = append(s.CheckpointDurations, o.CheckpointDurations...)
	if !o.FirstRecord.IsZero() && (s.FirstRecord.IsZero() || o.FirstRecord.Before(s.FirstRecord)) {
		s.FirstRecord = o.FirstRecord
	}
}

// SavepointRequest asks a running job for a savepoint.
type SavepointRequest struct {
	// Target is the directory to write to; empty means the default savepoint directory.
	Target string
	// Stop ends the job once the savepoint is complete. Its sinks do not commit the
	// savepoint's transactions: a job restored from it does.
	Stop bool
	// Checkpoint asks for a checkpoint rather than a savepoint: one the job owns (kept and
	// disposed of by retention) in its own format, which the sinks commit once it is
	// complete. With Stop it is how a task of a distributed job is handed over to another
	// runner: checkpoint, stop, and the next holder restores the checkpoint.
	Checkpoint bool
	// Drain (Flink's stop --drain) ends the sources' input first: every record read is
	// processed, the savepoint is the job's final checkpoint, the sinks commit it, and the
	// job finishes (Run returns nil). Reply receives the savepoint only after the sinks
	// committed it. See drain.go.
	Drain bool
	// Reply receives the savepoint's location or the error.
	Reply chan<- SavepointResult
}

// SavepointResult answers a SavepointRequest.
type SavepointResult struct {
	Location sdk.CompletedCheckpointStorageLocation
	Err      error
}

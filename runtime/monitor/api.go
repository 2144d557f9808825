package monitor

// The types in this file are the JSON answers of the HTTP endpoints. Their field names are
// those of Flink's REST API (CheckpointingStatistics, CheckpointStatistics,
// TaskCheckpointStatistics, SubtaskCheckpointStatistics, CheckpointConfigInfo,
// JobDetailsInfo), so scripts written against Flink read them unchanged. Times are
// milliseconds since the Unix epoch, durations milliseconds, sizes bytes. Fields Flowstate
// cannot fill are listed in docs/operations.md; they hold zero.

// Checkpoint statuses (Flink's CheckpointStatsStatus).
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
	StatusFailed     = "FAILED"
)

// CheckpointingStatistics answers GET /jobs/<job>/checkpoints.
type CheckpointingStatistics struct {
	Counts  Counts                 `json:"counts"`
	Summary Summary                `json:"summary"`
	Latest  LatestCheckpoints      `json:"latest"`
	History []CheckpointStatistics `json:"history"`
}

// Counts counts the job's checkpoints since the runner started it.
type Counts struct {
	Restored   int64 `json:"restored"`
	Total      int64 `json:"total"`
	InProgress int   `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
}

// Summary sums up the completed checkpoints (savepoints included).
type Summary struct {
	CheckpointedSize  StatsSummary `json:"checkpointed_size"`
	StateSize         StatsSummary `json:"state_size"`
	EndToEndDuration  StatsSummary `json:"end_to_end_duration"`
	AlignmentBuffered StatsSummary `json:"alignment_buffered"`
	ProcessedData     StatsSummary `json:"processed_data"`
	PersistedData     StatsSummary `json:"persisted_data"`
}

// StatsSummary is the minimum, maximum and average of a series, and its quantiles over the
// most recent values (Flink's StatsSummaryDto). All zero for an empty series.
type StatsSummary struct {
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
	Avg  int64   `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
}

// LatestCheckpoints are the newest completed checkpoint, savepoint and failed checkpoint,
// and the checkpoint the job was last restored from; null when there is none.
type LatestCheckpoints struct {
	Completed *CheckpointStatistics `json:"completed"`
	Savepoint *CheckpointStatistics `json:"savepoint"`
	Failed    *CheckpointStatistics `json:"failed"`
	Restored  *RestoredCheckpoint   `json:"restored"`
}

// RestoredCheckpoint is the checkpoint or savepoint the job was last restored from.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// Class names of CheckpointStatistics (Flink's "className" type discriminator).
const (
	ClassCompleted  = "completed"
	ClassFailed     = "failed"
	ClassInProgress = "in_progress"
)

// Checkpoint types (Flink's checkpoint_type).
const (
	TypeCheckpoint    = "CHECKPOINT"
	TypeSavepoint     = "SAVEPOINT"
	TypeSyncSavepoint = "SYNC_SAVEPOINT"
)

// CheckpointStatistics describes one checkpoint: an entry of the history and the answer of
// GET /jobs/<job>/checkpoints/details/<id>. Its sizes, durations and subtask counts are
// those of TaskCheckpointStatistics, summed over the tasks.
type CheckpointStatistics struct {
	ClassName string `json:"className"`
	TaskCheckpointStatistics
	IsSavepoint      bool   `json:"is_savepoint"`
	SavepointFormat  string `json:"savepointFormat,omitempty"`
	TriggerTimestamp int64  `json:"trigger_timestamp"`
	CheckpointType   string `json:"checkpoint_type"`
	// Tasks are the statistics of each task (source, keyed stage) by its id.
	Tasks map[string]TaskCheckpointStatistics `json:"tasks"`

	// ExternalPath is a completed checkpoint's pointer; Discarded says retention has
	// disposed of it. Completed checkpoints only.
	ExternalPath string `json:"external_path,omitempty"`
	Discarded    *bool  `json:"discarded,omitempty"`
	// UploadedSize is Flowstate's addition: the bytes of state written to the checkpoint
	// storage so far, as they go (a checkpoint in progress, a savepoint being taken), where
	// checkpointed_size grows only with each subtask's acknowledgement.
	UploadedSize int64 `json:"uploaded_size"`
	// FailureTimestamp and FailureMessage say when and why a checkpoint failed. Failed
	// checkpoints only.
	FailureTimestamp int64  `json:"failure_timestamp,omitempty"`
	FailureMessage   string `json:"failure_message,omitempty"`
}

// TaskCheckpointStatistics is one task's part of a checkpoint. CheckpointedSize is what
// the part uploaded; StateSize the whole state it references (they differ for incremental
// checkpoints).
type TaskCheckpointStatistics struct {
	ID                      int64  `json:"id"`
	Status                  string `json:"status"`
	LatestAckTimestamp      int64  `json:"latest_ack_timestamp"`
	CheckpointedSize        int64  `json:"checkpointed_size"`
	StateSize               int64  `json:"state_size"`
	EndToEndDuration        int64  `json:"end_to_end_duration"`
	AlignmentBuffered       int64  `json:"alignment_buffered"`
	ProcessedData           int64  `json:"processed_data"`
	PersistedData           int64  `json:"persisted_data"`
	NumSubtasks             int    `json:"num_subtasks"`
	NumAcknowledgedSubtasks int    `json:"num_acknowledged_subtasks"`
}

// TaskCheckpointDetails answers GET /jobs/<job>/checkpoints/details/<id>/subtasks/<task>:
// the task's part of the checkpoint with each subtask's.
type TaskCheckpointDetails struct {
	TaskCheckpointStatistics
	Summary  TaskCheckpointSummary         `json:"summary"`
	Subtasks []SubtaskCheckpointStatistics `json:"subtasks"`
}

// TaskCheckpointSummary sums up the acknowledged subtasks of a task.
type TaskCheckpointSummary struct {
	CheckpointedSize   StatsSummary     `json:"checkpointed_size"`
	StateSize          StatsSummary     `json:"state_size"`
	EndToEndDuration   StatsSummary     `json:"end_to_end_duration"`
	CheckpointDuration DurationSummary  `json:"checkpoint_duration"`
	Alignment          AlignmentSummary `json:"alignment"`
	StartDelay         StatsSummary     `json:"start_delay"`
}

// DurationSummary sums up the synchronous and asynchronous parts of the subtasks' snapshots.
type DurationSummary struct {
	Sync  StatsSummary `json:"sync"`
	Async StatsSummary `json:"async"`
}

// AlignmentSummary sums up the subtasks' barrier alignments.
type AlignmentSummary struct {
	Buffered  StatsSummary `json:"buffered"`
	Processed StatsSummary `json:"processed"`
	Persisted StatsSummary `json:"persisted"`
	Duration  StatsSummary `json:"duration"`
}

// Subtask checkpoint statuses (Flink's SubtaskCheckpointStatistics status).
const (
	SubtaskCompleted       = "completed"
	SubtaskPendingOrFailed = "pending_or_failed"
)

// SubtaskCheckpointStatistics is one subtask's part of a checkpoint. A subtask that has not
// acknowledged has only Index and Status (pending_or_failed).
type SubtaskCheckpointStatistics struct {
	Index  int    `json:"index"`
	Status string `json:"status"`
	// The rest is set once the subtask acknowledged.
	AckTimestamp        int64             `json:"ack_timestamp,omitempty"`
	EndToEndDuration    int64             `json:"end_to_end_duration,omitempty"`
	CheckpointedSize    int64             `json:"checkpointed_size,omitempty"`
	StateSize           int64             `json:"state_size,omitempty"`
	Checkpoint          *SubtaskDuration  `json:"checkpoint,omitempty"`
	Alignment           *SubtaskAlignment `json:"alignment,omitempty"`
	StartDelay          int64             `json:"start_delay,omitempty"`
	UnalignedCheckpoint bool              `json:"unaligned_checkpoint,omitempty"`
	Aborted             bool              `json:"aborted,omitempty"`
}

// SubtaskDuration is the synchronous part of a subtask's snapshot (the pause in
// processing) and the asynchronous part (the upload while processing goes on).
type SubtaskDuration struct {
	Sync  int64 `json:"sync"`
	Async int64 `json:"async"`
}

// SubtaskAlignment is a subtask's barrier alignment: Duration is the time from the first
// barrier reaching the subtask to the last.
type SubtaskAlignment struct {
	Buffered  int64 `json:"buffered"`
	Processed int64 `json:"processed"`
	Persisted int64 `json:"persisted"`
	Duration  int64 `json:"duration"`
}

// CheckpointConfigInfo answers GET /jobs/<job>/checkpoints/config.
type CheckpointConfigInfo struct {
	Mode                        string                     `json:"mode"`
	Interval                    int64                      `json:"interval"`
	Timeout                     int64                      `json:"timeout"`
	MinPause                    int64                      `json:"min_pause"`
	MaxConcurrent               int64                      `json:"max_concurrent"`
	Externalization             ExternalizedCheckpointInfo `json:"externalization"`
	StateBackend                string                     `json:"state_backend"`
	CheckpointStorage           string                     `json:"checkpoint_storage"`
	UnalignedCheckpoints        bool                       `json:"unaligned_checkpoints"`
	TolerableFailedCheckpoints  int                        `json:"tolerable_failed_checkpoints"`
	AlignedCheckpointTimeout    int64                      `json:"aligned_checkpoint_timeout"`
	CheckpointsAfterTasksFinish bool                       `json:"checkpoints_after_tasks_finish"`
	StateChangelogEnabled       bool                       `json:"state_changelog_enabled"`
	// Incremental and NumRetained are Flowstate's additions
	// (execution.checkpointing.incremental, execution.checkpointing.num-retained).
	Incremental bool `json:"incremental"`
	NumRetained int  `json:"num_retained"`
}

// ExternalizedCheckpointInfo says whether completed checkpoints outlive the job.
type ExternalizedCheckpointInfo struct {
	Enabled              bool `json:"enabled"`
	DeleteOnCancellation bool `json:"delete_on_cancellation"`
}

// Job states (Flink's JobStatus).
const (
	JobInitializing = "INITIALIZING"
	JobRunning      = "RUNNING"
	JobRestarting   = "RESTARTING"
	JobFinished     = "FINISHED"
	JobCanceled     = "CANCELED"
	JobFailed       = "FAILED"
	// JobSuspended: the runner stopped (SIGINT, SIGTERM) without cancelling the job, whose
	// checkpoints stay for --from latest.
	JobSuspended = "SUSPENDED"
)

// JobDetails answers GET /jobs/<job>: Flink's JobDetailsInfo, with Flowstate's additions
// (uptime, numRestarts, flowstate-type, config-file, plugins).
type JobDetails struct {
	JID            string           `json:"jid"`
	Name           string           `json:"name"`
	IsStoppable    bool             `json:"isStoppable"`
	State          string           `json:"state"`
	JobType        string           `json:"job-type"`
	StartTime      int64            `json:"start-time"`
	EndTime        int64            `json:"end-time"`
	Duration       int64            `json:"duration"`
	MaxParallelism int64            `json:"maxParallelism"`
	Now            int64            `json:"now"`
	Timestamps     map[string]int64 `json:"timestamps"`
	Vertices       []VertexDetails  `json:"vertices"`
	StatusCounts   map[string]int   `json:"status-counts"`

	// Uptime is how long the job has been running since it last entered RUNNING, in ms
	// (Flink's uptime metric): 0 while it is not running, -1 once it has ended.
	Uptime      int64 `json:"uptime"`
	NumRestarts int64 `json:"numRestarts"`
	// Type is job.type of a built-in job; "" for a custom one.
	Type       string          `json:"flowstate-type"`
	ConfigFile string          `json:"config-file,omitempty"`
	Plugins    []PluginDetails `json:"plugins"`
}

// VertexDetails is one task (Flink's job vertex) of the job, or an operator chained into
// one that counts its records itself (the sink).
type VertexDetails struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	MaxParallelism int            `json:"maxParallelism"`
	Parallelism    int            `json:"parallelism"`
	Status         string         `json:"status"`
	StartTime      int64          `json:"start-time"`
	EndTime        int64          `json:"end-time"`
	Duration       int64          `json:"duration"`
	Tasks          map[string]int `json:"tasks"`
	Metrics        IOMetrics      `json:"metrics"`

	// Flowstate's additions: the rates over the last 60 s, summed over the subtasks, and
	// each subtask's counts.
	ReadRecordsPerSecond  float64          `json:"read-records-per-second"`
	WriteRecordsPerSecond float64          `json:"write-records-per-second"`
	Subtasks              []SubtaskMetrics `json:"subtasks"`
}

// IOMetrics are a vertex's record counts (Flink's IOMetricsInfo). Flowstate counts
// records, not bytes, and does not measure busy, idle or backpressured time: those fields
// are 0 and the bytes are marked incomplete.
type IOMetrics struct {
	ReadBytes                    int64 `json:"read-bytes"`
	ReadBytesComplete            bool  `json:"read-bytes-complete"`
	WriteBytes                   int64 `json:"write-bytes"`
	WriteBytesComplete           bool  `json:"write-bytes-complete"`
	ReadRecords                  int64 `json:"read-records"`
	ReadRecordsComplete          bool  `json:"read-records-complete"`
	WriteRecords                 int64 `json:"write-records"`
	WriteRecordsComplete         bool  `json:"write-records-complete"`
	AccumulatedBackpressuredTime int64 `json:"accumulated-backpressured-time"`
	AccumulatedIdleTime          int64 `json:"accumulated-idle-time"`
	AccumulatedBusyTime          int64 `json:"accumulated-busy-time"`
}

// SubtaskMetrics are one operator subtask's counts.
type SubtaskMetrics struct {
	Subtask               int     `json:"subtask"`
	ReadRecords           int64   `json:"read-records"`
	WriteRecords          int64   `json:"write-records"`
	ReadRecordsPerSecond  float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond float64 `json:"write-records-per-second"`
	// StateSize is the bytes of the subtask's keyed backend, when the backend can tell;
	// -1 otherwise.
	StateSize int64 `json:"state-size"`
	// Connector is what the subtask's source or sink connector measured, when it
	// measures (the JetStream connectors do).
	Connector *ConnectorMetrics `json:"connector,omitempty"`
}

// ConnectorMetrics are what a source's or sink's subtask measured of its connector, with
// Flink's connector metric names.
type ConnectorMetrics struct {
	// PendingRecords is the sum of the splits' (a source's; absent for a sink).
	PendingRecords *int64 `json:"pendingRecords,omitempty"`
	// CurrentEmitEventTimeLag is how long before its emission the last record emitted
	// was stored in the input, in ms; -1 when unknown.
	CurrentEmitEventTimeLag int64          `json:"currentEmitEventTimeLag"`
	Splits                  []SplitMetrics `json:"splits,omitempty"`
	// Commits are a sink's.
	Commits *CommitMetrics `json:"commits,omitempty"`
}

// SplitMetrics are one split of a source subtask: the records it still has to read past
// the last emitted.
type SplitMetrics struct {
	Split          string `json:"split"`
	PendingRecords int64  `json:"pendingRecords"`
}

// CommitMetrics are a sink subtask's commits: how many, the records and batches they made
// visible, and their latency in ms.
type CommitMetrics struct {
	Commits        int64 `json:"commits"`
	Records        int64 `json:"records"`
	Batches        int64 `json:"batches"`
	LastLatency    int64 `json:"last-latency"`
	AverageLatency int64 `json:"average-latency"`
}

// PluginDetails describes one plugin process of the job.
type PluginDetails struct {
	Name string `json:"name"`
	// Roles are "state backend" and/or "checkpoint storage".
	Roles   []string `json:"roles"`
	Version string   `json:"version"`
	// Pid is the plugin's current process id; 0 for a plugin served in the runner's process.
	Pid      int    `json:"pid"`
	Path     string `json:"path,omitempty"`
	Restarts int64  `json:"restarts"`
}

// JobsOverview answers GET /jobs/overview (Flink's MultipleJobsDetails): the one job the
// runner runs.
type JobsOverview struct {
	Jobs []JobOverview `json:"jobs"`
}

// JobOverview is one job of GET /jobs/overview.
type JobOverview struct {
	JID       string `json:"jid"`
	Name      string `json:"name"`
	State     string `json:"state"`
	StartTime int64  `json:"start-time"`
	EndTime   int64  `json:"end-time"`
	Duration  int64  `json:"duration"`
}

// ErrorResponse is the body of every error answer, as Flink's REST API writes it.
type ErrorResponse struct {
	Errors []string `json:"errors"`
}

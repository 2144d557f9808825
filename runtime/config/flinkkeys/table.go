package flinkkeys

import "github.com/flowstate/flowstate/runtime/builtins"

// Namespaces of plugin options that Flink's keys are read as: state.backend.NAME.* for a
// state backend's, execution.checkpointing.NAME.* for a checkpoint storage's.
const (
	backendOptionPrefix = "state.backend."
	storageOptionPrefix = "execution.checkpointing."
	// stateBackendType selects the state backend; ForSt, as its value, is the feature the
	// keys under state.backend.forst. depend on.
	stateBackendType = "state.backend.type"
)

// Groups of the documentation table.
const (
	groupCheckpointing = "checkpointing"
	groupState         = "state backend"
	groupRecovery      = "state recovery"
	groupRestart       = "restart"
	groupRocksDB       = "RocksDB"
	groupChangelog     = "changelog"
	groupJob           = "job"
	groupCluster       = "cluster"
)

// Reasons shared by many entries.
const (
	whyRocksDBTuning = "RocksDB engine tuning; leveldb has no equivalent"
	whyCluster       = "a Flink cluster setting: the runner is one process with no JobManager or TaskManagers"
	whyMetrics       = "Flink's metrics system; the runner has none (it logs)"
	whyClient        = "Flink's client and deployment; the runner runs the job itself"
)

// table is the catalog, in the order of docs/configuration.md's table of Flink keys.
var table = []Key{
	// CheckpointingOptions (1.20/2.x; ExecutionCheckpointingOptions in 1.x) and
	// StateBackendOptions.
	{Name: "state.backend.type", Status: Supported, Default: "hashmap", Deprecated: []string{"state.backend"}, group: groupState},
	{Name: "execution.checkpointing.storage", Status: Supported, Default: "jobmanager (filesystem when a dir is set)", Deprecated: []string{"state.checkpoint-storage"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.dir", Status: Supported, Deprecated: []string{"state.checkpoints.dir", "state.backend.fs.checkpointdir"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.savepoint-dir", Status: Supported, Deprecated: []string{"state.savepoints.dir", "savepoints.state.backend.fs.dir"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.interval", Status: Supported, group: groupCheckpointing},
	{Name: "execution.checkpointing.timeout", Status: Supported, Default: "10 min", group: groupCheckpointing},
	{Name: "execution.checkpointing.num-retained", Status: Supported, Default: "1", Deprecated: []string{"state.checkpoints.num-retained"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.tolerable-failed-checkpoints", Status: Supported, Default: "0", group: groupCheckpointing},
	{Name: "execution.checkpointing.incremental", Status: Supported, Default: "false", Deprecated: []string{"state.backend.incremental"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.data-inline-threshold", Status: Supported, Default: "20kb", Deprecated: []string{"state.storage.fs.memory-threshold", "state.backend.fs.memory-threshold"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.mode", Status: Supported, Default: "EXACTLY_ONCE", group: groupCheckpointing},
	{Name: "execution.checkpointing.min-pause", Status: Supported, Default: "0 ms", group: groupCheckpointing},
	{Name: "execution.checkpointing.max-concurrent-checkpoints", Status: Supported, Default: "1", group: groupCheckpointing},
	{Name: "execution.checkpointing.externalized-checkpoint-retention", Status: Supported, Default: "NO_EXTERNALIZED_CHECKPOINTS", group: groupCheckpointing},
	{Name: "execution.checkpointing.write-buffer-size", Status: Alias, Target: storageOptionPrefix + builtins.FSStorage + "." + builtins.FSStorageWriteBufferSize, Default: "4096",
		Deprecated: []string{"state.storage.fs.write-buffer-size", "state.backend.fs.write-buffer-size"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.unaligned.enabled", Status: Refused, Default: "false", Kind: KindBool, What: "unaligned checkpoints",
		Deprecated: []string{"execution.checkpointing.unaligned"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.unaligned.forced", Status: Refused, Default: "false", Kind: KindBool, What: "unaligned checkpoints", group: groupCheckpointing},
	{Name: "execution.checkpointing.aligned-checkpoint-timeout", Status: Inert, Target: "execution.checkpointing.unaligned.enabled", Default: "0 s", Kind: KindDuration,
		Deprecated: []string{"execution.checkpointing.alignment-timeout"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.unaligned.interruptible-timers.enabled", Status: Inert, Target: "execution.checkpointing.unaligned.enabled", Default: "false", Kind: KindBool, group: groupCheckpointing},
	{Name: "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file", Status: Inert, Target: "execution.checkpointing.unaligned.enabled", Default: "5", Kind: KindInt, group: groupCheckpointing},
	{Name: "execution.checkpointing.local-backup.enabled", Status: Refused, Default: "false", Kind: KindBool, What: "local backup and local recovery", group: groupCheckpointing},
	{Name: "execution.checkpointing.local-backup.dirs", Status: Inert, Target: "execution.checkpointing.local-backup.enabled", Kind: KindString,
		Deprecated: []string{"taskmanager.state.local.root-dirs"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.enabled", Status: Refused, Default: "false", Kind: KindBool, What: "checkpoint file merging (FLIP-306)", group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.across-checkpoint-boundary", Status: Inert, Target: "execution.checkpointing.file-merging.enabled", Default: "false", Kind: KindBool, group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.max-file-size", Status: Inert, Target: "execution.checkpointing.file-merging.enabled", Default: "32MB", Kind: KindSize, group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.pool-blocking", Status: Inert, Target: "execution.checkpointing.file-merging.enabled", Default: "false", Kind: KindBool, group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.max-subtasks-per-file", Status: Inert, Target: "execution.checkpointing.file-merging.enabled", Default: "4", Kind: KindInt, group: groupCheckpointing},
	{Name: "execution.checkpointing.file-merging.max-space-amplification", Status: Inert, Target: "execution.checkpointing.file-merging.enabled", Default: "2", Kind: KindFloat, group: groupCheckpointing},
	{Name: "execution.checkpointing.create-subdir", Status: Refused, Default: "true", Kind: KindBool,
		What: "checkpoints directly in the checkpoint dir (Flowstate always writes under <dir>/<job.name>/)", Deprecated: []string{"state.checkpoints.create-subdir"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.checkpoints-after-tasks-finish", Status: Refused, Default: "true", Kind: KindBool,
		What:       "turning off checkpoints after some tasks finished (Flowstate always checkpoints to the end)",
		Deprecated: []string{"execution.checkpointing.checkpoints-after-tasks-finish.enabled"}, group: groupCheckpointing},
	{Name: "execution.checkpointing.interval-during-backlog", Status: Refused, Kind: KindDuration, What: "a separate checkpoint interval while sources report a backlog", group: groupCheckpointing},
	{Name: "execution.checkpointing.snapshot-compression", Status: Refused, Default: "false", Kind: KindBool, What: "snapshot compression", group: groupCheckpointing},
	{Name: "execution.checkpointing.prefer-checkpoint-for-recovery", Status: Refused, Default: "false", Also: []string{"true"}, Kind: KindBool,
		What: "recovering from savepoints (Flink 1.x's choice between them and checkpoints; Flowstate always recovers from its latest checkpoint)", group: groupCheckpointing},
	{Name: "execution.checkpointing.cleaner.parallel-mode", Status: Ignored, Default: "true", What: "how Flink's JobManager discards checkpoints; Flowstate disposes of them through the storage plugin",
		Deprecated: []string{"state.checkpoint.cleaner.parallel-mode"}, group: groupCheckpointing},
	{Name: "state.backend.async", Status: Ignored, Default: "true", What: "deprecated in Flink, which ignores it: snapshots are always asynchronous, here too", group: groupState},
	{Name: "state.backend.latency-track.", Status: Ignored, What: whyMetrics, group: groupState},

	// StateRecoveryOptions (1.20/2.x; execution.savepoint.* in 1.x).
	{Name: "execution.state-recovery.path", Status: Supported, Deprecated: []string{"execution.savepoint.path"}, group: groupRecovery},
	{Name: "execution.state-recovery.claim-mode", Status: Supported, Default: "NO_CLAIM", Deprecated: []string{"execution.savepoint-restore-mode"}, group: groupRecovery},
	{Name: "execution.state-recovery.ignore-unclaimed-state", Status: Supported, Default: "false", Deprecated: []string{"execution.savepoint.ignore-unclaimed-state"}, group: groupRecovery},
	{Name: "execution.state-recovery.from-local", Status: Refused, Default: "false", Kind: KindBool, What: "local recovery",
		Deprecated: []string{"state.backend.local-recovery"}, group: groupRecovery},
	{Name: "execution.state-recovery.approximate-local-recovery", Status: Refused, Default: "false", Kind: KindBool, What: "approximate local recovery",
		Deprecated: []string{"execution.checkpointing.approximate-local-recovery"}, group: groupRecovery},
	{Name: "execution.state-recovery.without-channel-state.checkpoint-id", Status: Inert, Target: "execution.checkpointing.unaligned.enabled", Default: "-1", Kind: KindInt,
		Deprecated: []string{"execution.checkpointing.recover-without-channel-state.checkpoint-id"}, group: groupRecovery},

	// RestartStrategyOptions.
	{Name: "restart-strategy.type", Status: Supported, Default: "exponential-delay with checkpointing, else none", Deprecated: []string{"restart-strategy"}, group: groupRestart},
	{Name: "restart-strategy.fixed-delay.attempts", Status: Supported, Default: "1", group: groupRestart},
	{Name: "restart-strategy.fixed-delay.delay", Status: Supported, Default: "1 s", group: groupRestart},
	{Name: "restart-strategy.failure-rate.max-failures-per-interval", Status: Supported, Default: "1", group: groupRestart},
	{Name: "restart-strategy.failure-rate.failure-rate-interval", Status: Supported, Default: "1 min", group: groupRestart},
	{Name: "restart-strategy.failure-rate.delay", Status: Supported, Default: "1 s", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.initial-backoff", Status: Supported, Default: "1 s", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.max-backoff", Status: Supported, Default: "1 min", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.backoff-multiplier", Status: Supported, Default: "1.5", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.reset-backoff-threshold", Status: Supported, Default: "1 h", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.jitter-factor", Status: Supported, Default: "0.1", group: groupRestart},
	{Name: "restart-strategy.exponential-delay.attempts-before-reset-backoff", Status: Supported, Default: "2147483647", group: groupRestart},
	{Name: "cleanup-strategy", Status: Ignored, What: "how Flink's JobManager retries cleaning up a finished job", group: groupRestart},
	{Name: "cleanup-strategy.", Status: Ignored, What: "how Flink's JobManager retries cleaning up a finished job", group: groupRestart},

	// ExecutionOptions, CoreOptions, PipelineOptions, TaskManagerOptions that Flowstate reads.
	{Name: "parallelism.default", Status: Alias, Target: "job.parallelism", Default: "1", group: groupJob},
	{Name: "pipeline.max-parallelism", Status: Alias, Target: "job.max-parallelism", Default: "-1 (Flink derives it)", group: groupJob},
	{Name: "pipeline.name", Status: Alias, Target: "job.name", group: groupJob},
	{Name: "task.cancellation.timeout", Status: Supported, Default: "180 s", group: groupJob},
	{Name: "execution.runtime-mode", Status: Refused, Default: "STREAMING", Kind: KindEnum, What: "batch execution (Flowstate runs every job as a streaming job)", group: groupJob},
	{Name: "execution.buffer-timeout", Status: Ignored, What: "Flink's network buffers; Flowstate sends a batch as soon as the source read it", group: groupJob},
	{Name: "execution.buffer-timeout.", Status: Ignored, What: "Flink's network buffers; Flowstate sends a batch as soon as the source read it", group: groupJob},
	{Name: "execution.async-state.", Status: Ignored, What: "Flink 2.0's asynchronous state API; Flowstate always reads state per micro-batch", group: groupJob},
	{Name: "execution.batch.", Status: Ignored, What: "Flink's batch execution", group: groupJob},
	{Name: "execution.batch-", Status: Ignored, What: "Flink's batch execution", group: groupJob},
	{Name: "execution.sort-partition.memory", Status: Ignored, What: "Flink's batch execution", group: groupJob},
	{Name: "execution.sort-keyed-partition.memory", Status: Ignored, What: "Flink's batch execution", group: groupJob},
	{Name: "execution.sorted-inputs.", Status: Ignored, What: "Flink's batch execution", group: groupJob},
	{Name: "execution.target", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.attached", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.shutdown-on-attached-exit", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.shutdown-on-application-finish", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.submit-failed-job-on-application-error", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.job-listeners", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.allow-client-job-configurations", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "execution.program-config.", Status: Ignored, What: whyClient, group: groupJob},
	{Name: "pipeline.", Status: Ignored, What: "a setting of Flink's DataStream program; Flowstate's jobs are built in", group: groupJob},

	// RocksDBOptions and RocksDBConfigurableOptions: leveldb plays the role of the embedded
	// RocksDB backend, so the keys with a leveldb meaning map to its options and the others
	// load only at Flink's default.
	{Name: "state.backend.rocksdb.localdir", Status: Alias, Target: backendOptionPrefix + builtins.LevelDB + "." + builtins.LevelDBLocalDir, Backend: builtins.LevelDB,
		Deprecated: []string{"state.backend.rocksdb.checkpointdir"}, group: groupRocksDB},
	{Name: "state.backend.rocksdb.block.cache-size", Status: Alias, Target: backendOptionPrefix + builtins.LevelDB + "." + builtins.LevelDBBlockCacheSize, Default: "8mb", Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.writebuffer.size", Status: Alias, Target: backendOptionPrefix + builtins.LevelDB + "." + builtins.LevelDBWriteBufferSize, Default: "64mb", Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.managed", Status: Refused, Default: "true", Also: []string{"false"}, Kind: KindBool, Backend: builtins.LevelDB,
		What: "sizing RocksDB from Flink's managed memory (leveldb sizes each keyed backend by block-cache-size and write-buffer-size)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.fixed-per-slot", Status: Refused, Kind: KindSize, Backend: builtins.LevelDB, What: "a memory budget shared by the RocksDB instances of a slot", group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.fixed-per-tm", Status: Refused, Kind: KindSize, Backend: builtins.LevelDB, What: "a memory budget shared by the RocksDB instances of a TaskManager", group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.write-buffer-ratio", Status: Refused, Default: "0.5", Kind: KindFloat, Backend: builtins.LevelDB, What: "a shared RocksDB memory budget", group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.high-prio-pool-ratio", Status: Refused, Default: "0.1", Kind: KindFloat, Backend: builtins.LevelDB, What: "a shared RocksDB memory budget", group: groupRocksDB},
	{Name: "state.backend.rocksdb.memory.partitioned-index-filters", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: "partitioned RocksDB index and filter blocks", group: groupRocksDB},
	{Name: "state.backend.rocksdb.timer-service.factory", Status: Refused, Default: "ROCKSDB", Also: []string{"HEAP"}, Kind: KindEnum, Backend: builtins.LevelDB,
		What: "timers (Flowstate's jobs have none)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.timer-service.cache-size", Status: Refused, Default: "128", Kind: KindInt, Backend: builtins.LevelDB, What: "timers (Flowstate's jobs have none)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.checkpoint.transfer.thread.num", Status: Refused, Default: "4", Kind: KindInt, Backend: builtins.LevelDB, What: "RocksDB's file transfer threads", group: groupRocksDB},
	{Name: "state.backend.rocksdb.predefined-options", Status: Refused, Default: "DEFAULT", Kind: KindEnum, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.options-factory", Status: Refused, Kind: KindString, Backend: builtins.LevelDB, What: "a Java RocksDBOptionsFactory", group: groupRocksDB},
	{Name: "state.backend.rocksdb.thread.num", Status: Refused, Default: "2", Kind: KindInt, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.files.open", Status: Refused, Default: "-1", Kind: KindInt, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.log.max-file-size", Status: Refused, Default: "25mb", Kind: KindSize, Backend: builtins.LevelDB, What: "RocksDB's own log", group: groupRocksDB},
	{Name: "state.backend.rocksdb.log.file-num", Status: Refused, Default: "4", Kind: KindInt, Backend: builtins.LevelDB, What: "RocksDB's own log", group: groupRocksDB},
	{Name: "state.backend.rocksdb.log.dir", Status: Refused, Kind: KindString, Backend: builtins.LevelDB, What: "RocksDB's own log", group: groupRocksDB},
	{Name: "state.backend.rocksdb.log.level", Status: Refused, Default: "INFO_LEVEL", Kind: KindEnum, Backend: builtins.LevelDB, What: "RocksDB's own log", group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.style", Status: Refused, Default: "LEVEL", Kind: KindEnum, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.level.use-dynamic-size", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.compression.per.level", Status: Refused, Default: "SNAPPY_COMPRESSION", Kind: KindEnum, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.level.target-file-size-base", Status: Refused, Default: "64mb", Kind: KindSize, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.level.max-size-level-base", Status: Refused, Default: "256mb", Kind: KindSize, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.writebuffer.count", Status: Refused, Default: "2", Kind: KindInt, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.writebuffer.number-to-merge", Status: Refused, Default: "1", Kind: KindInt, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.block.blocksize", Status: Refused, Default: "4kb", Kind: KindSize, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.block.metadata-blocksize", Status: Refused, Default: "4kb", Kind: KindSize, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.write-batch-size", Status: Refused, Default: "2mb", Kind: KindSize, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.use-bloom-filter", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.bloom-filter.bits-per-key", Status: Refused, Default: "10.0", Kind: KindFloat, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.bloom-filter.block-based-mode", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: whyRocksDBTuning, group: groupRocksDB},
	{Name: "state.backend.rocksdb.restore-overlap-fraction-threshold", Status: Refused, Default: "0.0", Kind: KindFloat, Backend: builtins.LevelDB, What: "RocksDB's native restore", group: groupRocksDB},
	{Name: "state.backend.rocksdb.use-ingest-db-restore-mode", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: "RocksDB's native restore", group: groupRocksDB},
	{Name: "state.backend.rocksdb.incremental-restore-async-compact-after-rescale", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: "RocksDB's native restore", group: groupRocksDB},
	{Name: "state.backend.rocksdb.rescaling.use-delete-files-in-range", Status: Refused, Default: "false", Kind: KindBool, Backend: builtins.LevelDB, What: "RocksDB's native restore", group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.filter.query-time-after-num-entries", Status: Refused, Default: "1000", Kind: KindInt, Backend: builtins.LevelDB, What: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.compaction.filter.periodic-compaction-time", Status: Refused, Default: "30 d", Kind: KindDuration, Backend: builtins.LevelDB, What: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.min-interval", Status: Refused, Default: "0 min", Kind: KindDuration, Backend: builtins.LevelDB, What: "RocksDB's manual compaction", group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.max-parallel-compactions", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "5", Kind: KindInt, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.max-file-size-to-compact", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "50k", Kind: KindSize, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.min-files-to-compact", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "5", Kind: KindInt, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.max-files-to-compact", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "30", Kind: KindInt, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.max-output-file-size", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "64Mb", Kind: KindSize, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.manual-compaction.max-auto-compactions", Status: Inert, Target: "state.backend.rocksdb.manual-compaction.min-interval", Default: "30", Kind: KindInt, Backend: builtins.LevelDB, group: groupRocksDB},
	{Name: "state.backend.rocksdb.ttl.compaction.filter.enabled", Status: Refused, Default: "true", Also: []string{"false"}, Kind: KindBool, Backend: builtins.LevelDB,
		What: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{Name: "state.backend.rocksdb.metrics.", Status: Ignored, What: whyMetrics, group: groupRocksDB},
	// ForStOptions (Flink 2.x): ForSt, Flink 2.0's disaggregated state backend, is refused
	// as a value of state.backend.type; its keys matter only with it.
	{Name: "state.backend.forst.", Status: Inert, Target: stateBackendType, Backend: ForSt, group: groupState},

	// StateChangelogOptions and FsStateChangelogOptions.
	{Name: "state.backend.changelog.enabled", Status: Refused, Default: "false", Kind: KindBool, What: "the changelog state backend (FLIP-158)", group: groupChangelog},
	{Name: "state.backend.changelog.storage", Status: Inert, Target: "state.backend.changelog.enabled", Default: "memory", Kind: KindEnum, group: groupChangelog},
	{Name: "state.backend.changelog.periodic-materialize.interval", Status: Inert, Target: "state.backend.changelog.enabled", Default: "10 min", Kind: KindDuration, group: groupChangelog},
	{Name: "state.backend.changelog.max-failures-allowed", Status: Inert, Target: "state.backend.changelog.enabled", Default: "3", Kind: KindInt, group: groupChangelog},
	{Name: "dstl.dfs.", Status: Inert, Target: "state.backend.changelog.enabled", group: groupChangelog},

	// Flink's S3 file systems: the keys fsstorage has an option for map to it.
	{Name: "s3.endpoint", Status: Alias, Target: storageOptionPrefix + builtins.FSStorage + "." + builtins.FSStorageS3Endpoint, group: groupCheckpointing},
	{Name: "s3.access-key", Status: Alias, Target: storageOptionPrefix + builtins.FSStorage + "." + builtins.FSStorageS3AccessKey, Deprecated: []string{"s3.access.key"}, group: groupCheckpointing},
	{Name: "s3.secret-key", Status: Alias, Target: storageOptionPrefix + builtins.FSStorage + "." + builtins.FSStorageS3SecretKey, Deprecated: []string{"s3.secret.key"}, group: groupCheckpointing},
	{Name: "s3.path.style.access", Status: Alias, Target: storageOptionPrefix + builtins.FSStorage + "." + builtins.FSStorageS3PathStyle, Deprecated: []string{"s3.path-style-access"}, group: groupCheckpointing},
	{Name: "s3.", Status: Ignored, What: "a setting of Flink's S3 file system that fsstorage has no option for", group: groupCluster},

	// Namespaces that only concern a Flink cluster, its clients or its observability
	// (CoreOptions, ClusterOptions, JobManagerOptions, TaskManagerOptions, RestOptions,
	// WebOptions, HighAvailabilityOptions, MetricOptions, SecurityOptions, ...).
	{Name: "jobmanager.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "taskmanager.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "rest.", Status: Ignored, What: "Flink's REST endpoint; the runner's control endpoint has its own rest.* keys (docs/configuration.md)", group: groupCluster},
	{Name: "web.", Status: Ignored, What: "Flink's web UI", group: groupCluster},
	{Name: "blob.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "akka.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "pekko.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "heartbeat.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "cluster.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "resourcemanager.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "slotmanager.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "slot.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "jobstore.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "job-result-store.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "local.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "process.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "io.tmp.dirs", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "high-availability", Status: Ignored, What: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{Name: "high-availability.", Status: Ignored, What: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{Name: "zookeeper.", Status: Ignored, What: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{Name: "kubernetes.", Status: Ignored, What: "Flink's Kubernetes deployment", group: groupCluster},
	{Name: "yarn.", Status: Ignored, What: "Flink's YARN deployment", group: groupCluster},
	{Name: "mesos.", Status: Ignored, What: "Flink's Mesos deployment", group: groupCluster},
	{Name: "env.", Status: Ignored, What: "the environment of Flink's JVM processes", group: groupCluster},
	{Name: "classloader.", Status: Ignored, What: "Flink's user-code class loading", group: groupCluster},
	{Name: "plugin.", Status: Ignored, What: "Flink's Java plugin class loading (Flowstate's plugins are set under plugins.*)", group: groupCluster},
	{Name: "client.", Status: Ignored, What: whyClient, group: groupCluster},
	{Name: "metrics.", Status: Ignored, What: whyMetrics, group: groupCluster},
	{Name: "jmx.", Status: Ignored, What: whyMetrics, group: groupCluster},
	{Name: "historyserver.", Status: Ignored, What: "Flink's history server", group: groupCluster},
	{Name: "security.", Status: Ignored, What: "security of Flink's cluster (Kerberos, SSL between its processes and of its REST endpoint, with keystores); plugins talk to the runner over local pipes, and the control endpoint's TLS is rest.ssl.certificate and rest.ssl.key (PEM)", group: groupCluster},
	{Name: "fs.", Status: Ignored, What: "Flink's file system layer; fsstorage has its own options (execution.checkpointing.fsstorage.*)", group: groupCluster},
	{Name: "gs.", Status: Ignored, What: "Flink's file system layer; fsstorage has its own options (execution.checkpointing.fsstorage.*)", group: groupCluster},
	{Name: "external-resources", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "external-resource.", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "queryable-state.", Status: Ignored, What: "Flink's queryable state", group: groupCluster},
	{Name: "python.", Status: Ignored, What: "Flink's Python API", group: groupCluster},
	{Name: "table.", Status: Ignored, What: "Flink's Table API and SQL", group: groupCluster},
	{Name: "sql-client.", Status: Ignored, What: "Flink's Table API and SQL", group: groupCluster},
	{Name: "sql-gateway.", Status: Ignored, What: "Flink's Table API and SQL", group: groupCluster},
	{Name: "compiler.", Status: Ignored, What: "Flink's batch optimizer", group: groupCluster},
	{Name: "failover-strategy", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "scheduler-mode", Status: Ignored, What: whyCluster, group: groupCluster},
	{Name: "recovery.", Status: Ignored, What: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{Name: "$internal.", Status: Ignored, What: "set by Flink's deployment tools for its own processes", group: groupCluster},
	{Name: "job.autoscaler.", Status: Ignored, What: "the autoscaler of Flink's Kubernetes operator", group: groupCluster},
}

// ForSt is the value of state.backend.type that names ForSt, Flink 2.0's disaggregated
// state backend, which Flowstate refuses; the keys under state.backend.forst. matter only
// with it.
const ForSt = "forst"

// refusedBackends are values of state.backend.type that name a Flink state backend
// Flowstate does not implement.
var refusedBackends = map[string]string{
	ForSt: "ForSt, Flink 2.0's disaggregated state backend, is not supported: use leveldb (rocksdb) or hashmap",
}

// backendAliases are other names of the built-in state backends: Flink's "rocksdb" and the
// factory classes Flink accepts in state.backend.type.
var backendAliases = map[string]string{
	"rocksdb": builtins.LevelDB,
	"org.apache.flink.contrib.streaming.state.embeddedrocksdbstatebackendfactory": builtins.LevelDB,
	"org.apache.flink.contrib.streaming.state.rocksdbstatebackendfactory":         builtins.LevelDB,
	"org.apache.flink.state.rocksdb.embeddedrocksdbstatebackendfactory":           builtins.LevelDB,
	"org.apache.flink.runtime.state.hashmap.hashmapstatebackendfactory":           builtins.Hashmap,
}

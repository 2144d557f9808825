package config

import (
	"strings"

	"github.com/flowstate/flowstate/runtime/builtins"
)

// The catalog of Apache Flink's configuration keys: what Flowstate does with each key Flink
// defines for checkpoints, state backends, state recovery and restarts, and with the
// namespaces of keys that only concern a Flink cluster. Flowstate keeps Flink's key names, so
// a Flink configuration file loads here; this table makes sure no Flink key is misread as
// something else (a plugin option, say).
//
// Facts come from Flink's own option classes, read in apache/flink (master, which is 2.x,
// and the release-1.x history of the same files):
//   - CheckpointingOptions (flink-core, org.apache.flink.configuration; 1.20 and 2.x hold the
//     execution.checkpointing.* keys that 1.x kept in ExecutionCheckpointingOptions),
//   - StateBackendOptions, StateRecoveryOptions, StateChangelogOptions, ExecutionOptions,
//     RestartStrategyOptions, CoreOptions, PipelineOptions (flink-core),
//   - RocksDBOptions, RocksDBConfigurableOptions, RocksDBManualCompactionOptions,
//     RocksDBNativeMetricOptions (flink-statebackend-rocksdb, org.apache.flink.state.rocksdb
//     in 2.x), ForStOptions (flink-statebackend-forst, 2.x),
//   - FsStateChangelogOptions (flink-dstl-dfs), and Flink's S3 file system documentation
//     (docs/deployment/filesystems/s3.md) for the s3.* keys.
//
// Defaults are Flink's, as its ConfigOption declarations write them; def "" means Flink has
// no default (the feature is off unless the key is set).

// flinkStatus is what Flowstate does with a Flink key.
type flinkStatus int

const (
	// flinkSupported: Flowstate implements the key with Flink's meaning; currentKeys parses
	// it. The entry's dep spellings are Flink's deprecated keys for it.
	flinkSupported flinkStatus = iota
	// flinkAlias: the key is read as target, a Flowstate key or plugin option.
	flinkAlias
	// flinkRefused: a feature Flowstate does not implement. Only Flink's default (or a value
	// in also) loads, with a note; any other value is refused by name.
	flinkRefused
	// flinkInert: a setting that matters only when the feature of target is on, which
	// Flowstate refuses: it loads with a note saying it has no effect.
	flinkInert
	// flinkIgnored: concerns a Flink cluster (JobManager, TaskManagers, web UI, high
	// availability, metrics, ...) or a tuning Flowstate has no equivalent of: it loads and
	// is listed as ignored.
	flinkIgnored
)

// flinkKey is one Flink key, or a namespace of keys (see namespace).
type flinkKey struct {
	key    string
	status flinkStatus
	// target: for aliases the key it is read as; for inert keys the key of the feature
	// they depend on.
	target string
	// def is Flink's default as Flink writes it; kind says how values compare with it.
	def  string
	kind valueKind
	// also are other values that load with a note (refused keys only).
	also []string
	// what names the feature (refused keys) or says why the key is ignored.
	what string
	// backend, when set, limits the key to that state backend: with another backend it is
	// ignored with a warning, as Flink ignores the RocksDB keys of a hashmap job.
	backend string
	// dep are Flink's deprecated spellings of the key.
	dep []string
	// group is the section of docs/configuration.md's table of Flink keys.
	group string
}

// namespace reports whether the entry stands for every key that starts with its key: one
// ending in "." (or "-", as in execution.batch-shuffle-mode).
func (e *flinkKey) namespace() bool {
	return strings.HasSuffix(e.key, ".") || strings.HasSuffix(e.key, "-")
}

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

// flinkKeys is the catalog.
var flinkKeys = []flinkKey{
	// CheckpointingOptions (1.20/2.x; ExecutionCheckpointingOptions in 1.x) and
	// StateBackendOptions.
	{key: KeyStateBackend, status: flinkSupported, def: "hashmap", dep: []string{"state.backend"}, group: groupState},
	{key: KeyCheckpointStorage, status: flinkSupported, def: "jobmanager (filesystem when a dir is set)", dep: []string{"state.checkpoint-storage"}, group: groupCheckpointing},
	{key: KeyCheckpointDir, status: flinkSupported, dep: []string{"state.checkpoints.dir", "state.backend.fs.checkpointdir"}, group: groupCheckpointing},
	{key: KeySavepointDir, status: flinkSupported, dep: []string{"state.savepoints.dir", "savepoints.state.backend.fs.dir"}, group: groupCheckpointing},
	{key: KeyInterval, status: flinkSupported, group: groupCheckpointing},
	{key: KeyTimeout, status: flinkSupported, def: "10 min", group: groupCheckpointing},
	{key: KeyNumRetained, status: flinkSupported, def: "1", dep: []string{"state.checkpoints.num-retained"}, group: groupCheckpointing},
	{key: KeyTolerableFailed, status: flinkSupported, def: "0", group: groupCheckpointing},
	{key: KeyIncremental, status: flinkSupported, def: "false", dep: []string{"state.backend.incremental"}, group: groupCheckpointing},
	{key: KeyDataInlineThreshold, status: flinkSupported, def: "20kb", dep: []string{"state.storage.fs.memory-threshold", "state.backend.fs.memory-threshold"}, group: groupCheckpointing},
	{key: KeyCheckpointingMode, status: flinkSupported, def: ModeExactlyOnce, group: groupCheckpointing},
	{key: KeyMinPause, status: flinkSupported, def: "0 ms", group: groupCheckpointing},
	{key: KeyMaxConcurrent, status: flinkSupported, def: "1", group: groupCheckpointing},
	{key: KeyRetention, status: flinkSupported, def: RetainNever, group: groupCheckpointing},
	{key: "execution.checkpointing.write-buffer-size", status: flinkAlias, target: storageOptionPrefix + FSStorage + "." + builtins.FSStorageWriteBufferSize, def: "4096",
		dep: []string{"state.storage.fs.write-buffer-size", "state.backend.fs.write-buffer-size"}, group: groupCheckpointing},
	{key: "execution.checkpointing.unaligned.enabled", status: flinkRefused, def: "false", kind: kindBool, what: "unaligned checkpoints",
		dep: []string{"execution.checkpointing.unaligned"}, group: groupCheckpointing},
	{key: "execution.checkpointing.unaligned.forced", status: flinkRefused, def: "false", kind: kindBool, what: "unaligned checkpoints", group: groupCheckpointing},
	{key: "execution.checkpointing.aligned-checkpoint-timeout", status: flinkInert, target: "execution.checkpointing.unaligned.enabled", def: "0 s", kind: kindDuration,
		dep: []string{"execution.checkpointing.alignment-timeout"}, group: groupCheckpointing},
	{key: "execution.checkpointing.unaligned.interruptible-timers.enabled", status: flinkInert, target: "execution.checkpointing.unaligned.enabled", def: "false", kind: kindBool, group: groupCheckpointing},
	{key: "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file", status: flinkInert, target: "execution.checkpointing.unaligned.enabled", def: "5", kind: kindInt, group: groupCheckpointing},
	{key: "execution.checkpointing.local-backup.enabled", status: flinkRefused, def: "false", kind: kindBool, what: "local backup and local recovery", group: groupCheckpointing},
	{key: "execution.checkpointing.local-backup.dirs", status: flinkInert, target: "execution.checkpointing.local-backup.enabled", kind: kindString,
		dep: []string{"taskmanager.state.local.root-dirs"}, group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.enabled", status: flinkRefused, def: "false", kind: kindBool, what: "checkpoint file merging (FLIP-306)", group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.across-checkpoint-boundary", status: flinkInert, target: "execution.checkpointing.file-merging.enabled", def: "false", kind: kindBool, group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.max-file-size", status: flinkInert, target: "execution.checkpointing.file-merging.enabled", def: "32MB", kind: kindSize, group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.pool-blocking", status: flinkInert, target: "execution.checkpointing.file-merging.enabled", def: "false", kind: kindBool, group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.max-subtasks-per-file", status: flinkInert, target: "execution.checkpointing.file-merging.enabled", def: "4", kind: kindInt, group: groupCheckpointing},
	{key: "execution.checkpointing.file-merging.max-space-amplification", status: flinkInert, target: "execution.checkpointing.file-merging.enabled", def: "2", kind: kindFloat, group: groupCheckpointing},
	{key: "execution.checkpointing.create-subdir", status: flinkRefused, def: "true", kind: kindBool,
		what: "checkpoints directly in the checkpoint dir (Flowstate always writes under <dir>/<job.name>/)", dep: []string{"state.checkpoints.create-subdir"}, group: groupCheckpointing},
	{key: "execution.checkpointing.checkpoints-after-tasks-finish", status: flinkRefused, def: "true", kind: kindBool,
		what: "turning off checkpoints after some tasks finished (Flowstate always checkpoints to the end)",
		dep:  []string{"execution.checkpointing.checkpoints-after-tasks-finish.enabled"}, group: groupCheckpointing},
	{key: "execution.checkpointing.interval-during-backlog", status: flinkRefused, kind: kindDuration, what: "a separate checkpoint interval while sources report a backlog", group: groupCheckpointing},
	{key: "execution.checkpointing.snapshot-compression", status: flinkRefused, def: "false", kind: kindBool, what: "snapshot compression", group: groupCheckpointing},
	{key: "execution.checkpointing.prefer-checkpoint-for-recovery", status: flinkRefused, def: "false", also: []string{"true"}, kind: kindBool,
		what: "recovering from savepoints (Flink 1.x's choice between them and checkpoints; Flowstate always recovers from its latest checkpoint)", group: groupCheckpointing},
	{key: "execution.checkpointing.cleaner.parallel-mode", status: flinkIgnored, def: "true", what: "how Flink's JobManager discards checkpoints; Flowstate disposes of them through the storage plugin",
		dep: []string{"state.checkpoint.cleaner.parallel-mode"}, group: groupCheckpointing},
	{key: "state.backend.async", status: flinkIgnored, def: "true", what: "deprecated in Flink, which ignores it: snapshots are always asynchronous, here too", group: groupState},
	{key: "state.backend.latency-track.", status: flinkIgnored, what: whyMetrics, group: groupState},

	// StateRecoveryOptions (1.20/2.x; execution.savepoint.* in 1.x).
	{key: KeyRecoveryPath, status: flinkSupported, dep: []string{"execution.savepoint.path"}, group: groupRecovery},
	{key: KeyClaimMode, status: flinkSupported, def: ClaimNo, dep: []string{"execution.savepoint-restore-mode"}, group: groupRecovery},
	{key: KeyIgnoreUnclaimed, status: flinkSupported, def: "false", dep: []string{"execution.savepoint.ignore-unclaimed-state"}, group: groupRecovery},
	{key: "execution.state-recovery.from-local", status: flinkRefused, def: "false", kind: kindBool, what: "local recovery",
		dep: []string{"state.backend.local-recovery"}, group: groupRecovery},
	{key: "execution.state-recovery.approximate-local-recovery", status: flinkRefused, def: "false", kind: kindBool, what: "approximate local recovery",
		dep: []string{"execution.checkpointing.approximate-local-recovery"}, group: groupRecovery},
	{key: "execution.state-recovery.without-channel-state.checkpoint-id", status: flinkInert, target: "execution.checkpointing.unaligned.enabled", def: "-1", kind: kindInt,
		dep: []string{"execution.checkpointing.recover-without-channel-state.checkpoint-id"}, group: groupRecovery},

	// RestartStrategyOptions.
	{key: KeyRestartType, status: flinkSupported, def: "exponential-delay with checkpointing, else none", dep: []string{"restart-strategy"}, group: groupRestart},
	{key: KeyRestartAttempts, status: flinkSupported, def: "1", group: groupRestart},
	{key: KeyRestartDelay, status: flinkSupported, def: "1 s", group: groupRestart},
	{key: KeyFailureRateMax, status: flinkSupported, def: "1", group: groupRestart},
	{key: KeyFailureRateInterval, status: flinkSupported, def: "1 min", group: groupRestart},
	{key: KeyFailureRateDelay, status: flinkSupported, def: "1 s", group: groupRestart},
	{key: KeyExpInitialBackoff, status: flinkSupported, def: "1 s", group: groupRestart},
	{key: KeyExpMaxBackoff, status: flinkSupported, def: "1 min", group: groupRestart},
	{key: KeyExpMultiplier, status: flinkSupported, def: "1.5", group: groupRestart},
	{key: KeyExpResetThreshold, status: flinkSupported, def: "1 h", group: groupRestart},
	{key: KeyExpJitter, status: flinkSupported, def: "0.1", group: groupRestart},
	{key: KeyExpAttempts, status: flinkSupported, def: "2147483647", group: groupRestart},
	{key: "cleanup-strategy", status: flinkIgnored, what: "how Flink's JobManager retries cleaning up a finished job", group: groupRestart},
	{key: "cleanup-strategy.", status: flinkIgnored, what: "how Flink's JobManager retries cleaning up a finished job", group: groupRestart},

	// ExecutionOptions, CoreOptions, PipelineOptions, TaskManagerOptions that Flowstate reads.
	{key: "parallelism.default", status: flinkAlias, target: KeyJobParallelism, def: "1", group: groupJob},
	{key: "pipeline.max-parallelism", status: flinkAlias, target: KeyJobMaxParallelism, def: "-1 (Flink derives it)", group: groupJob},
	{key: "pipeline.name", status: flinkAlias, target: KeyJobName, group: groupJob},
	{key: KeyCancellationTimeout, status: flinkSupported, def: "180 s", group: groupJob},
	{key: "execution.runtime-mode", status: flinkRefused, def: "STREAMING", kind: kindEnum, what: "batch execution (Flowstate runs every job as a streaming job)", group: groupJob},
	{key: "execution.buffer-timeout", status: flinkIgnored, what: "Flink's network buffers; Flowstate sends a batch as soon as the source read it", group: groupJob},
	{key: "execution.buffer-timeout.", status: flinkIgnored, what: "Flink's network buffers; Flowstate sends a batch as soon as the source read it", group: groupJob},
	{key: "execution.async-state.", status: flinkIgnored, what: "Flink 2.0's asynchronous state API; Flowstate always reads state per micro-batch", group: groupJob},
	{key: "execution.batch.", status: flinkIgnored, what: "Flink's batch execution", group: groupJob},
	{key: "execution.batch-", status: flinkIgnored, what: "Flink's batch execution", group: groupJob},
	{key: "execution.sort-partition.memory", status: flinkIgnored, what: "Flink's batch execution", group: groupJob},
	{key: "execution.sort-keyed-partition.memory", status: flinkIgnored, what: "Flink's batch execution", group: groupJob},
	{key: "execution.sorted-inputs.", status: flinkIgnored, what: "Flink's batch execution", group: groupJob},
	{key: "execution.target", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.attached", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.shutdown-on-attached-exit", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.shutdown-on-application-finish", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.submit-failed-job-on-application-error", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.job-listeners", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.allow-client-job-configurations", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "execution.program-config.", status: flinkIgnored, what: whyClient, group: groupJob},
	{key: "pipeline.", status: flinkIgnored, what: "a setting of Flink's DataStream program; Flowstate's jobs are built in", group: groupJob},

	// RocksDBOptions and RocksDBConfigurableOptions: leveldb plays the role of the embedded
	// RocksDB backend, so the keys with a leveldb meaning map to its options and the others
	// load only at Flink's default.
	{key: "state.backend.rocksdb.localdir", status: flinkAlias, target: backendOptionPrefix + LevelDB + "." + builtins.LevelDBLocalDir, backend: LevelDB,
		dep: []string{"state.backend.rocksdb.checkpointdir"}, group: groupRocksDB},
	{key: "state.backend.rocksdb.block.cache-size", status: flinkAlias, target: backendOptionPrefix + LevelDB + "." + builtins.LevelDBBlockCacheSize, def: "8mb", backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.writebuffer.size", status: flinkAlias, target: backendOptionPrefix + LevelDB + "." + builtins.LevelDBWriteBufferSize, def: "64mb", backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.managed", status: flinkRefused, def: "true", also: []string{"false"}, kind: kindBool, backend: LevelDB,
		what: "sizing RocksDB from Flink's managed memory (leveldb sizes each keyed backend by block-cache-size and write-buffer-size)", group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.fixed-per-slot", status: flinkRefused, kind: kindSize, backend: LevelDB, what: "a memory budget shared by the RocksDB instances of a slot", group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.fixed-per-tm", status: flinkRefused, kind: kindSize, backend: LevelDB, what: "a memory budget shared by the RocksDB instances of a TaskManager", group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.write-buffer-ratio", status: flinkRefused, def: "0.5", kind: kindFloat, backend: LevelDB, what: "a shared RocksDB memory budget", group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.high-prio-pool-ratio", status: flinkRefused, def: "0.1", kind: kindFloat, backend: LevelDB, what: "a shared RocksDB memory budget", group: groupRocksDB},
	{key: "state.backend.rocksdb.memory.partitioned-index-filters", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: "partitioned RocksDB index and filter blocks", group: groupRocksDB},
	{key: "state.backend.rocksdb.timer-service.factory", status: flinkRefused, def: "ROCKSDB", also: []string{"HEAP"}, kind: kindEnum, backend: LevelDB,
		what: "timers (Flowstate's jobs have none)", group: groupRocksDB},
	{key: "state.backend.rocksdb.timer-service.cache-size", status: flinkRefused, def: "128", kind: kindInt, backend: LevelDB, what: "timers (Flowstate's jobs have none)", group: groupRocksDB},
	{key: "state.backend.rocksdb.checkpoint.transfer.thread.num", status: flinkRefused, def: "4", kind: kindInt, backend: LevelDB, what: "RocksDB's file transfer threads", group: groupRocksDB},
	{key: "state.backend.rocksdb.predefined-options", status: flinkRefused, def: "DEFAULT", kind: kindEnum, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.options-factory", status: flinkRefused, kind: kindString, backend: LevelDB, what: "a Java RocksDBOptionsFactory", group: groupRocksDB},
	{key: "state.backend.rocksdb.thread.num", status: flinkRefused, def: "2", kind: kindInt, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.files.open", status: flinkRefused, def: "-1", kind: kindInt, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.log.max-file-size", status: flinkRefused, def: "25mb", kind: kindSize, backend: LevelDB, what: "RocksDB's own log", group: groupRocksDB},
	{key: "state.backend.rocksdb.log.file-num", status: flinkRefused, def: "4", kind: kindInt, backend: LevelDB, what: "RocksDB's own log", group: groupRocksDB},
	{key: "state.backend.rocksdb.log.dir", status: flinkRefused, kind: kindString, backend: LevelDB, what: "RocksDB's own log", group: groupRocksDB},
	{key: "state.backend.rocksdb.log.level", status: flinkRefused, def: "INFO_LEVEL", kind: kindEnum, backend: LevelDB, what: "RocksDB's own log", group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.style", status: flinkRefused, def: "LEVEL", kind: kindEnum, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.level.use-dynamic-size", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.compression.per.level", status: flinkRefused, def: "SNAPPY_COMPRESSION", kind: kindEnum, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.level.target-file-size-base", status: flinkRefused, def: "64mb", kind: kindSize, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.level.max-size-level-base", status: flinkRefused, def: "256mb", kind: kindSize, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.writebuffer.count", status: flinkRefused, def: "2", kind: kindInt, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.writebuffer.number-to-merge", status: flinkRefused, def: "1", kind: kindInt, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.block.blocksize", status: flinkRefused, def: "4kb", kind: kindSize, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.block.metadata-blocksize", status: flinkRefused, def: "4kb", kind: kindSize, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.write-batch-size", status: flinkRefused, def: "2mb", kind: kindSize, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.use-bloom-filter", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.bloom-filter.bits-per-key", status: flinkRefused, def: "10.0", kind: kindFloat, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.bloom-filter.block-based-mode", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: whyRocksDBTuning, group: groupRocksDB},
	{key: "state.backend.rocksdb.restore-overlap-fraction-threshold", status: flinkRefused, def: "0.0", kind: kindFloat, backend: LevelDB, what: "RocksDB's native restore", group: groupRocksDB},
	{key: "state.backend.rocksdb.use-ingest-db-restore-mode", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: "RocksDB's native restore", group: groupRocksDB},
	{key: "state.backend.rocksdb.incremental-restore-async-compact-after-rescale", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: "RocksDB's native restore", group: groupRocksDB},
	{key: "state.backend.rocksdb.rescaling.use-delete-files-in-range", status: flinkRefused, def: "false", kind: kindBool, backend: LevelDB, what: "RocksDB's native restore", group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.filter.query-time-after-num-entries", status: flinkRefused, def: "1000", kind: kindInt, backend: LevelDB, what: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{key: "state.backend.rocksdb.compaction.filter.periodic-compaction-time", status: flinkRefused, def: "30 d", kind: kindDuration, backend: LevelDB, what: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.min-interval", status: flinkRefused, def: "0 min", kind: kindDuration, backend: LevelDB, what: "RocksDB's manual compaction", group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.max-parallel-compactions", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "5", kind: kindInt, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.max-file-size-to-compact", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "50k", kind: kindSize, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.min-files-to-compact", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "5", kind: kindInt, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.max-files-to-compact", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "30", kind: kindInt, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.max-output-file-size", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "64Mb", kind: kindSize, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.manual-compaction.max-auto-compactions", status: flinkInert, target: "state.backend.rocksdb.manual-compaction.min-interval", def: "30", kind: kindInt, backend: LevelDB, group: groupRocksDB},
	{key: "state.backend.rocksdb.ttl.compaction.filter.enabled", status: flinkRefused, def: "true", also: []string{"false"}, kind: kindBool, backend: LevelDB,
		what: "state TTL (Flowstate's state has none)", group: groupRocksDB},
	{key: "state.backend.rocksdb.metrics.", status: flinkIgnored, what: whyMetrics, group: groupRocksDB},
	// ForStOptions (Flink 2.x): ForSt, Flink 2.0's disaggregated state backend, is refused
	// as a value of state.backend.type; its keys matter only with it.
	{key: "state.backend.forst.", status: flinkInert, target: KeyStateBackend, backend: forstBackend, group: groupState},

	// StateChangelogOptions and FsStateChangelogOptions.
	{key: "state.backend.changelog.enabled", status: flinkRefused, def: "false", kind: kindBool, what: "the changelog state backend (FLIP-158)", group: groupChangelog},
	{key: "state.backend.changelog.storage", status: flinkInert, target: "state.backend.changelog.enabled", def: "memory", kind: kindEnum, group: groupChangelog},
	{key: "state.backend.changelog.periodic-materialize.interval", status: flinkInert, target: "state.backend.changelog.enabled", def: "10 min", kind: kindDuration, group: groupChangelog},
	{key: "state.backend.changelog.max-failures-allowed", status: flinkInert, target: "state.backend.changelog.enabled", def: "3", kind: kindInt, group: groupChangelog},
	{key: "dstl.dfs.", status: flinkInert, target: "state.backend.changelog.enabled", group: groupChangelog},

	// Flink's S3 file systems: the keys fsstorage has an option for map to it.
	{key: "s3.endpoint", status: flinkAlias, target: storageOptionPrefix + FSStorage + "." + builtins.FSStorageS3Endpoint, group: groupCheckpointing},
	{key: "s3.access-key", status: flinkAlias, target: storageOptionPrefix + FSStorage + "." + builtins.FSStorageS3AccessKey, dep: []string{"s3.access.key"}, group: groupCheckpointing},
	{key: "s3.secret-key", status: flinkAlias, target: storageOptionPrefix + FSStorage + "." + builtins.FSStorageS3SecretKey, dep: []string{"s3.secret.key"}, group: groupCheckpointing},
	{key: "s3.path.style.access", status: flinkAlias, target: storageOptionPrefix + FSStorage + "." + builtins.FSStorageS3PathStyle, dep: []string{"s3.path-style-access"}, group: groupCheckpointing},
	{key: "s3.", status: flinkIgnored, what: "a setting of Flink's S3 file system that fsstorage has no option for", group: groupCluster},

	// Namespaces that only concern a Flink cluster, its clients or its observability
	// (CoreOptions, ClusterOptions, JobManagerOptions, TaskManagerOptions, RestOptions,
	// WebOptions, HighAvailabilityOptions, MetricOptions, SecurityOptions, ...).
	{key: "jobmanager.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "taskmanager.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "rest.", status: flinkIgnored, what: "Flink's REST endpoint; the runner's control endpoint has its own rest.* keys (docs/configuration.md)", group: groupCluster},
	{key: "web.", status: flinkIgnored, what: "Flink's web UI", group: groupCluster},
	{key: "blob.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "akka.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "pekko.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "heartbeat.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "cluster.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "resourcemanager.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "slotmanager.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "slot.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "jobstore.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "job-result-store.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "local.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "process.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "io.tmp.dirs", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "high-availability", status: flinkIgnored, what: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{key: "high-availability.", status: flinkIgnored, what: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{key: "zookeeper.", status: flinkIgnored, what: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{key: "kubernetes.", status: flinkIgnored, what: "Flink's Kubernetes deployment", group: groupCluster},
	{key: "yarn.", status: flinkIgnored, what: "Flink's YARN deployment", group: groupCluster},
	{key: "mesos.", status: flinkIgnored, what: "Flink's Mesos deployment", group: groupCluster},
	{key: "env.", status: flinkIgnored, what: "the environment of Flink's JVM processes", group: groupCluster},
	{key: "classloader.", status: flinkIgnored, what: "Flink's user-code class loading", group: groupCluster},
	{key: "plugin.", status: flinkIgnored, what: "Flink's Java plugin class loading (Flowstate's plugins are set under plugins.*)", group: groupCluster},
	{key: "client.", status: flinkIgnored, what: whyClient, group: groupCluster},
	{key: "metrics.", status: flinkIgnored, what: whyMetrics, group: groupCluster},
	{key: "jmx.", status: flinkIgnored, what: whyMetrics, group: groupCluster},
	{key: "historyserver.", status: flinkIgnored, what: "Flink's history server", group: groupCluster},
	{key: "security.", status: flinkIgnored, what: "security of Flink's cluster (Kerberos, SSL between its processes and of its REST endpoint, with keystores); plugins talk to the runner over local pipes, and the control endpoint's TLS is rest.ssl.certificate and rest.ssl.key (PEM)", group: groupCluster},
	{key: "fs.", status: flinkIgnored, what: "Flink's file system layer; fsstorage has its own options (execution.checkpointing.fsstorage.*)", group: groupCluster},
	{key: "gs.", status: flinkIgnored, what: "Flink's file system layer; fsstorage has its own options (execution.checkpointing.fsstorage.*)", group: groupCluster},
	{key: "external-resources", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "external-resource.", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "queryable-state.", status: flinkIgnored, what: "Flink's queryable state", group: groupCluster},
	{key: "python.", status: flinkIgnored, what: "Flink's Python API", group: groupCluster},
	{key: "table.", status: flinkIgnored, what: "Flink's Table API and SQL", group: groupCluster},
	{key: "sql-client.", status: flinkIgnored, what: "Flink's Table API and SQL", group: groupCluster},
	{key: "sql-gateway.", status: flinkIgnored, what: "Flink's Table API and SQL", group: groupCluster},
	{key: "compiler.", status: flinkIgnored, what: "Flink's batch optimizer", group: groupCluster},
	{key: "failover-strategy", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "scheduler-mode", status: flinkIgnored, what: whyCluster, group: groupCluster},
	{key: "recovery.", status: flinkIgnored, what: "Flink's high availability services (the runner has no JobManager to fail over)", group: groupCluster},
	{key: "$internal.", status: flinkIgnored, what: "set by Flink's deployment tools for its own processes", group: groupCluster},
	{key: "job.autoscaler.", status: flinkIgnored, what: "the autoscaler of Flink's Kubernetes operator", group: groupCluster},
}

// forstBackend is the name of Flink 2.0's disaggregated state backend, ForSt.
const forstBackend = "forst"

// refusedBackends are values of state.backend.type that name a Flink state backend
// Flowstate does not implement.
var refusedBackends = map[string]string{
	forstBackend: "ForSt, Flink 2.0's disaggregated state backend, is not supported: use leveldb (rocksdb) or hashmap",
}

// backendAliases are other names of the built-in state backends: Flink's "rocksdb" and the
// factory classes Flink accepts in state.backend.type.
var backendAliases = map[string]string{
	"rocksdb": LevelDB,
	"org.apache.flink.contrib.streaming.state.embeddedrocksdbstatebackendfactory": LevelDB,
	"org.apache.flink.contrib.streaming.state.rocksdbstatebackendfactory":         LevelDB,
	"org.apache.flink.state.rocksdb.embeddedrocksdbstatebackendfactory":           LevelDB,
	"org.apache.flink.runtime.state.hashmap.hashmapstatebackendfactory":           Hashmap,
}

// Package flinkkeys is what Flowstate knows of Apache Flink's configuration keys,
// independent of parsing: what Flowstate does with each key Flink defines for checkpoints,
// state backends, state recovery and restarts, and with the namespaces of keys that only
// concern a Flink cluster. Flowstate keeps Flink's key names, so a Flink configuration file
// loads; this catalog makes sure no Flink key is misread as something else (a plugin option,
// say).
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
// Defaults are Flink's, as its ConfigOption declarations write them; an empty Default means
// Flink has no default (the feature is off unless the key is set).
//
// It owns the catalog (Key, one entry per key or namespace, with its Status), the lookup
// of a key Flowstate does not read itself (Lookup), the names of the features refused keys
// turn on (FeatureOf), and the values of state.backend.type that name a Flink state backend
// Flowstate refuses (RefusedBackend) or another name of a built-in one (BackendAlias).
// Parsing a file, comparing a value with Flink's default and the messages about a key are
// runtime/config's, which reads this catalog; the keys a supported entry names are the keys
// runtime/config parses, as its tests check.
//
// Dependency rule: this package imports only the standard library and runtime/builtins
// (for the names and options of the built-ins Flink's keys map to). It never imports
// runtime/config or anything else of the runtime, nor anything under plugins/.
package flinkkeys

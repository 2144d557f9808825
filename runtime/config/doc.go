// Package config reads Flowstate's YAML configuration file and explains what it means.
//
// Keys follow Apache Flink's current names (state.backend.type,
// execution.checkpointing.storage, execution.checkpointing.dir, ...). Flat dotted keys and
// nested maps are both accepted, and may be mixed. Deprecated Flink keys and values still load,
// with one deprecation message each naming the replacement, and map as FLIP-142's Old -> New
// table says (state.backend: filesystem is hashmap plus filesystem checkpoint storage, and so
// on). Migrate rewrites a file in current keys.
//
// Selection follows Flink's loaders: what code sets (Overrides) wins over the file, the file
// over defaults; with no checkpoint storage configured, a state backend plugin that also
// implements CheckpointStorage serves as the storage, else filesystem storage (fsstorage) when
// a checkpoint directory is set, else jobmanager storage (jmstorage). Resolve applies these
// rules; Explain describes the result in the seed's terms: where working state lives, and
// whether checkpoints survive losing this machine.
package config

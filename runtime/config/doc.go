// Package config reads Flowstate's YAML configuration file: it owns the keys, their
// parsing and validation, Flink's key names and deprecations as the parser applies them,
// overrides, provenance and migration to current keys. What Flowstate knows of Flink's keys
// (the catalog: which it supports, reads as its own, refuses, or ignores, with Flink's
// defaults and deprecated spellings) is package runtime/config/flinkkeys, which it reads.
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
// rules; package runtime/config/explain describes the result in the seed's terms: where
// working state lives, and whether checkpoints survive losing this machine. Provenance
// records where each key was set (its line, the flag that set it, the key as written).
//
// Dependency rule: config imports the SDK's contract and helpers (sdk, sdk/bytesize,
// sdk/layout), runtime/builtins
// for the built-ins' names, kinds and options, runtime/config/flinkkeys for the catalog of
// Flink's keys, and YAML; it never imports a plugin (nothing under plugins/, not even the
// registry plugins/builtin), the packages beside it that import it
// (runtime/config/explain), or the runner. Of the machine it reads the configuration file
// and the symlinks of the paths it names, never the mount table.
package config

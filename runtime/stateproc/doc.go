// Package stateproc works on completed checkpoints and savepoints offline, like a small
// Flink State Processor API: it reports what a checkpoint holds (Inspect), checks every
// state stream against its handle (Verify), decodes keyed state entries (Dump), writes a
// savepoint whose key groups are recomputed for another max parallelism (RescaleKeys) and
// deletes a checkpoint or savepoint through its storage (Dispose). The runner's
// `checkpoints inspect|verify|dump|rescale-keys` and `savepoint --dispose` commands are
// thin layers over it.
//
// Keyed state is read in the formats this package can decode: sdk.FormatCanonical (package
// sdk/kvstream) and LevelDBIncremental, the leveldb plugin's incremental format. Handles of
// any other format are reported with their sizes and marked as not decoded.
//
// It works on what a job left behind, never on a running job: it imports the checkpoint
// format (runtime/checkpoint), the state keys (runtime/state), runtime/storagepath and the
// SDK, and must never import the engine (runtime/dataflow), the configuration, the runner,
// the monitor, the plugin host, or a plugin (it reads the leveldb plugin's incremental
// format from its own description of it, not from the plugin's code).
package stateproc

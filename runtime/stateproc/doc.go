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
package stateproc

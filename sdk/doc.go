// Package sdk is the stable interface between the Flowstate runner and its plugins.
//
// Flowstate follows Apache Flink's FLIP-142, which separates two concerns that users kept
// confusing:
//
//   - A state backend keeps a job's working state while the job runs: in the plugin's heap
//     (hashmap) or in an embedded LSM store on local disk (leveldb). A state backend is not
//     durable by itself; losing the machine loses its state.
//   - A checkpoint storage persists consistent snapshots of that state for fault tolerance:
//     in the memory of a coordinating process (jmstorage, for tests and small state) or in a
//     file system or object store (fsstorage, for production).
//
// The runner owns the job and the meaning of state. A state backend stores ordered bytes for
// many keyed backends (one per operator subtask), snapshots them and restores them; it never
// talks to a checkpoint storage directly. During a checkpoint the runner hands the backend a
// CheckpointStreamFactory whose streams it forwards to the configured CheckpointStorage, so a
// snapshot keeps Flink's shape: backend.Snapshot(checkpoint) then snapshot.Write(streams)
// returns state handles, which the runner records in the checkpoint's metadata.
//
// A plugin is a program whose main function calls Serve with a value implementing
// StateBackend, CheckpointStorage, or both. A state backend that also implements
// CheckpointStorage (one extra interface) is served as both kinds, as FLIP-142 promises for
// external state backends.
//
// Nothing in this package exposes the wire protocol: plugins implement plain Go interfaces,
// and the runner sees the very same interfaces whether a plugin runs in its own process or in
// the runner's. This package holds the contract and the plugin's end of the protocol, which
// Serve runs; hosts start plugins and talk to them with package sdk/host, which a plugin
// does not link. Package sdk/sdktest is the conformance kit, sdk/kvstream the canonical
// snapshot format.
//
// Names that served hosts rather than plugins (KindsOf, PipelinedWriter, ServeWithOptions,
// CPUProfileEnv, Handshake, Checksum, NewChecksum, VerifyingReader) are deprecated and go in
// the next release; each says what replaces it.
package sdk

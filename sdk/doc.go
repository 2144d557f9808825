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
// A plugin is a program whose main function is one call of server.Serve (package
// sdk/server) with a value implementing StateBackend, CheckpointStorage, or both. A state
// backend that also implements CheckpointStorage (one extra interface) is served as both
// kinds, as FLIP-142 promises for external state backends.
//
// Nothing in this package exposes the wire protocol: plugins implement plain Go interfaces,
// and the runner sees the very same interfaces whether a plugin runs in its own process or in
// the runner's. This package is the contract only: interfaces, types, errors and options.
// The plugin's end of the protocol is sdk/server; hosts start plugins and talk to them with
// sdk/host, which a plugin does not link. Package sdk/sdktest is the conformance kit,
// sdk/kvstream the canonical snapshot format, sdk/optional the one way to combine a value
// with optional interfaces, sdk/bytesize the parser of byte sizes in options.
//
// This package must never import gRPC, the protocol (sdk/internal/proto), the server or
// the host end (internal/deps checks it): it imports only the standard library and hclog.
package sdk

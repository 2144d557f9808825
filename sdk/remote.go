package sdk

import "context"

// RemoteFileAdopter is an optional interface of a CheckpointStorageAccess whose storage can
// take over files a state backend keeps on a store of its own (the disaggregated backend's
// table files on S3 or in a directory), and of the CheckpointStreamFactory the runner hands
// Snapshot.Write for a checkpoint (never a savepoint's) when its access is one. A
// checkpoint then references such a file where it is instead of copying its bytes, as
// Flink 2.0's ForSt checkpoints reference the files of its primary directory.
//
// An adopted file is shared state of the job (ScopeShared): OpenState reads it in place,
// DiscardState deletes it, SharedStateLister (when the access has it) lists it, and the
// runner's shared-state registry decides when it goes, as for uploaded shared streams:
// never while a retained checkpoint references it. Who owns it is fixed by the checkpoint
// it was adopted for:
//   - until a checkpoint that references it completes, the file stays the backend's: the
//     runner never discards it as the upload of a failed checkpoint (only once the attempt
//     that adopted it ended, its keyed backends closed, and no retained checkpoint
//     references it), and the backend deletes it when neither its live state nor a pending
//     snapshot uses it;
//   - once such a checkpoint completes (NotifyCheckpointComplete), the backend never
//     deletes it: the registry does, when no retained checkpoint references it. A backend
//     must therefore reference, in each checkpoint, every adopted file its live state may
//     still read.
//
// A backend calls it from Snapshot.Write, when its streams implement it, for the files its
// snapshot references that have no handle yet. Streams without it, or an error wrapping
// ErrUnsupported, mean the storage cannot take these files over: the backend writes their
// bytes to ScopeShared streams instead, as any backend does.
//
// An access served by a plugin process implements it exactly when the plugin's access
// does, and so do the streams of a snapshot in a plugin process when the runner's do.
// sdk/dirstorage (so fsstorage) adopts files on the medium of its checkpoint directory;
// jmstorage adopts none.
type RemoteFileAdopter interface {
	// AdoptRemoteFiles takes over files, each given by its URI as Ref (s3://bucket/key,
	// file:///absolute/path), its Size and the CRC-32C of its bytes as Checksum. It returns,
	// in the same order, a handle of scope ScopeShared for each, whose Ref names the file in
	// the storage's terms and whose Size and Checksum are the file's; adopting a file again
	// returns the same Ref, so that the registry counts the references to one file once.
	// Each file must exist with its Size: a file the storage cannot reach, or does not find
	// with that size, fails the call with an error wrapping ErrUnsupported, and none of the
	// handles may be referenced. The files are never read, copied or changed.
	AdoptRemoteFiles(ctx context.Context, files []StreamStateHandle) ([]StreamStateHandle, error)
}

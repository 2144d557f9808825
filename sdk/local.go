package sdk

import "context"

// LocalStateLocator is an optional interface of a CheckpointStorageAccess whose state
// streams can be plain files on the runner's machine, and of a StateReader over such an
// access. When a keyed backend served by a plugin process restores, the SDK asks the
// runner's reader for each handle's local file and, when there is one, reads the file in
// the plugin directly, checking its size and checksum against the handle, instead of
// pulling every byte through the runner: one copy across no process boundary rather than
// two. A plugin that cannot open the file (another machine, another user) falls back to
// pulling the bytes through the runner.
//
// This mirrors Flink, where a state backend restores by reading its state handles from
// the checkpoint file system itself. fsstorage implements it for file:// checkpoint
// directories; on S3, and for jmstorage, there is no local file.
type LocalStateLocator interface {
	// LocalStatePath returns the absolute path of the local file that holds exactly h's
	// bytes, or "" when h is not such a file (inline bytes, an object store).
	LocalStatePath(ctx context.Context, h StreamStateHandle) (string, error)
}

// LocalStateFactory is an optional interface of a CheckpointStreamFactory (a checkpoint
// location) whose state streams can be plain files on the runner's machine: the mirror,
// for snapshots, of LocalStateLocator. When a keyed backend served by a plugin process
// writes a snapshot, the SDK asks the runner's factory for a local file for each stream
// and, when there is one, writes the file in the plugin directly, computing its size and
// checksum as it goes, instead of pushing every byte through the runner: one copy across
// no process boundary rather than two. A plugin that cannot open the file (another
// machine, another user) gives it back and writes through the runner.
//
// This mirrors Flink, where a state backend writes its state files to the checkpoint file
// system itself. fsstorage implements it for file:// checkpoint directories; on S3, and
// for jmstorage, there is no local file.
type LocalStateFactory interface {
	// CreateLocalStateFile creates an empty file for a state stream of scope and returns
	// its absolute path, or "" when the factory has no local file for it (the caller then
	// uses CreateCheckpointStateOutputStream). The caller writes the file, closes it, and
	// ends it with exactly one call of PublishLocalStateFile or DiscardLocalStateFile.
	CreateLocalStateFile(ctx context.Context, scope Scope) (string, error)
	// PublishLocalStateFile makes the file at path, which CreateLocalStateFile created for
	// scope, durable and returns its handle. The caller wrote size bytes to it, whose
	// CRC-32C is checksum. The handle is the one CloseAndGetHandle of a stream of the same
	// bytes would return: small state may come back inline, and its file removed. A file
	// whose size is not size is an error wrapping ErrCorrupt. When it fails, the file is
	// deleted.
	PublishLocalStateFile(ctx context.Context, path string, scope Scope, size int64, checksum uint32) (StreamStateHandle, error)
	// DiscardLocalStateFile deletes the file at path, which CreateLocalStateFile created.
	DiscardLocalStateFile(ctx context.Context, path string) error
}

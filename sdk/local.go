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

package sdk

import "context"

// SharedStateLister is an optional interface of a CheckpointStorageAccess: it lists the
// job's shared state streams (ScopeShared), whichever checkpoint wrote them, completed or
// not. The runner calls it when a job starts and deletes, with DiscardState, the shared
// streams no completed checkpoint references: the uploads of checkpoints a crash
// interrupted, which no location disposal reaches.
//
// fsstorage lists the files in <dir>/<job>/shared/; jmstorage its shared blobs of the job.
// An access served by a plugin process implements it exactly when the plugin's access does.
type SharedStateLister interface {
	// ListSharedState returns a handle (Ref, Size and Scope ScopeShared; Checksum 0) for
	// every shared stream of the job. Streams being written may or may not be listed.
	ListSharedState(ctx context.Context) ([]StreamStateHandle, error)
}

package sdk

import (
	"context"
	"io"
	"time"
)

// CheckpointStorage defines how checkpoint snapshots are persisted for fault tolerance.
// Implementations store checkpoints in different fashions and with different availability
// guarantees: jmstorage keeps them in memory (lightweight, not highly available, small state
// only: for tests and development); fsstorage writes them to a file system (large state,
// highly available when the file system is; recommended for production).
type CheckpointStorage interface {
	Plugin
	// ResolveCheckpoint resolves a pointer to a completed checkpoint or savepoint (for
	// fsstorage a chk-N directory or its _metadata file). It returns an error wrapping
	// ErrNotFound when nothing complete is there, naming the pointer.
	ResolveCheckpoint(ctx context.Context, externalPointer string) (CompletedCheckpointStorageLocation, error)
	// CreateCheckpointStorage returns the storage of one job's checkpoints.
	CreateCheckpointStorage(ctx context.Context, jobID string) (CheckpointStorageAccess, error)
}

// CheckpointStorageAccess is one job's view of a CheckpointStorage.
type CheckpointStorageAccess interface {
	// SupportsHighlyAvailableStorage reports whether checkpoints outlive the process that
	// stores them (true for a file system, false for memory).
	SupportsHighlyAvailableStorage() bool
	// HasDefaultSavepointLocation reports whether a savepoint directory is configured.
	HasDefaultSavepointLocation() bool
	// InitializeBaseLocationsForCheckpoint creates the job's base locations (for fsstorage
	// <dir>/<job>/shared and taskowned) and removes leftovers of checkpoints that never
	// completed.
	InitializeBaseLocationsForCheckpoint(ctx context.Context) error
	// InitializeLocationForCheckpoint creates the location of checkpoint checkpointID (for
	// fsstorage <dir>/<job>/chk-N).
	InitializeLocationForCheckpoint(ctx context.Context, checkpointID int64) (CheckpointStorageLocation, error)
	// InitializeLocationForSavepoint creates the location of a savepoint under target, or
	// under the default savepoint directory when target is empty. With neither it returns
	// an error wrapping ErrInvalidArgument: "No savepoint location given and no default
	// location configured."
	InitializeLocationForSavepoint(ctx context.Context, checkpointID int64, target string) (CheckpointStorageLocation, error)
	// ListCompletedCheckpoints returns the job's completed checkpoints (not savepoints),
	// oldest first. Incomplete ones are never listed.
	ListCompletedCheckpoints(ctx context.Context) ([]CompletedCheckpointStorageLocation, error)
	// OpenState returns the bytes of a handle this storage wrote, for this or another job.
	OpenState(ctx context.Context, h StreamStateHandle) (io.ReadCloser, error)
	// DiscardState deletes the bytes of handles, typically shared ones no retained
	// checkpoint uses. Missing ones are not an error.
	DiscardState(ctx context.Context, handles []StreamStateHandle) error
	// DisposeCheckpoint deletes a completed checkpoint: its metadata first, so it never
	// resolves again, then its exclusive state. Shared state is left to DiscardState.
	DisposeCheckpoint(ctx context.Context, loc CompletedCheckpointStorageLocation) error
	// Close releases the access.
	Close() error
}

// CheckpointStorageLocation is where one checkpoint or savepoint is being written. It is
// also the stream factory for that checkpoint's state.
type CheckpointStorageLocation interface {
	CheckpointStreamFactory
	// CreateMetadataOutputStream starts writing the checkpoint's metadata. The checkpoint
	// becomes complete, and resolvable, only when that stream's CloseAndFinalize succeeds.
	CreateMetadataOutputStream(ctx context.Context) (MetadataOutputStream, error)
	// DisposeOnFailure deletes everything written to the location for a checkpoint that
	// will not complete. Shared state is left to the runner.
	DisposeOnFailure(ctx context.Context) error
	// LocationReference returns the location's reference, for example its directory.
	LocationReference() string
}

// CheckpointStreamFactory creates the streams a snapshot writes its state to.
type CheckpointStreamFactory interface {
	// CreateCheckpointStateOutputStream opens a new stream in the given scope.
	CreateCheckpointStateOutputStream(ctx context.Context, scope Scope) (CheckpointStateOutputStream, error)
}

// Scope says who owns a state stream.
type Scope int

const (
	// ScopeExclusive: the stream belongs to one checkpoint and is deleted with it.
	ScopeExclusive Scope = iota
	// ScopeShared: several (incremental) checkpoints may reference the stream; the runner's
	// shared-state registry deletes it when no retained checkpoint does.
	ScopeShared
)

// String returns "exclusive" or "shared".
func (s Scope) String() string {
	if s == ScopeShared {
		return "shared"
	}
	return "exclusive"
}

// CheckpointStateOutputStream receives the bytes of one piece of state.
type CheckpointStateOutputStream interface {
	io.Writer
	// CloseAndGetHandle keeps the bytes and returns the handle that reads them back.
	CloseAndGetHandle(ctx context.Context) (StreamStateHandle, error)
	// Close without CloseAndGetHandle means failure: the bytes are deleted. After
	// CloseAndGetHandle it does nothing.
	Close() error
}

// MetadataOutputStream receives a checkpoint's metadata.
type MetadataOutputStream interface {
	io.Writer
	// CloseAndFinalize makes the metadata durable and the checkpoint complete, atomically:
	// a checkpoint whose metadata is not whole never resolves. It fails if the metadata
	// already exists.
	CloseAndFinalize(ctx context.Context) (CompletedCheckpointStorageLocation, error)
	// Close without CloseAndFinalize discards the metadata written so far.
	Close() error
}

// StreamStateHandle refers to the bytes of one state stream.
type StreamStateHandle struct {
	// Ref locates the bytes inside the storage that wrote them, in that storage's own terms
	// (for fsstorage an absolute file URI). Empty when the bytes are Inline.
	Ref string
	// Inline holds the bytes themselves when the storage kept them inline (state below the
	// data inline threshold). Inline bytes travel inside the checkpoint metadata.
	Inline []byte
	// Size is the number of bytes.
	Size int64
	// Scope is the scope the stream was opened with.
	Scope Scope
	// Checksum is the CRC-32C (Castagnoli) of the bytes. The runner fills it in as the
	// bytes pass through it and checks it on every read; plugins copy it unchanged.
	Checksum uint32
}

// CompletedCheckpointStorageLocation is the location of a completed checkpoint or savepoint.
type CompletedCheckpointStorageLocation struct {
	// ExternalPointer is the pointer users pass to resume from it, for fsstorage the chk-N
	// or savepoint directory.
	ExternalPointer string
	// Metadata is the handle of the metadata written through MetadataOutputStream.
	Metadata StreamStateHandle
	// CheckpointID is the id the location was initialized with, as far as the storage can
	// tell (fsstorage reads it from chk-N; 0 when unknown). The metadata is authoritative.
	CheckpointID int64
	// Time is when the metadata was finalized, as far as the storage can tell (zero when
	// unknown). The metadata is authoritative.
	Time time.Time
}

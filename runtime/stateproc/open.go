package stateproc

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// Checkpoint is a completed checkpoint or savepoint opened for offline work.
type Checkpoint struct {
	// Pointer is the pointer it was opened with.
	Pointer string
	// Location is where its storage keeps it.
	Location sdk.CompletedCheckpointStorageLocation
	// Metadata is its decoded metadata.
	Metadata *checkpoint.Metadata
	// Access reads its state streams.
	Access sdk.CheckpointStorageAccess
	// Storage is the storage it was resolved through.
	Storage sdk.CheckpointStorage
}

// Open resolves pointer through storage and reads the metadata it points to through
// access (an access of any job reads the streams of every job of its storage). A pointer
// that does not resolve, or whose metadata is damaged, is an error naming it.
func Open(ctx context.Context, storage sdk.CheckpointStorage, access sdk.CheckpointStorageAccess, pointer string) (*Checkpoint, error) {
	loc, err := resolve(ctx, storage, pointer)
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.Load(ctx, access, loc)
	if err != nil {
		return nil, fmt.Errorf("checkpoint pointer %q: %w", pointer, err)
	}
	return &Checkpoint{Pointer: pointer, Location: loc, Metadata: m, Access: access, Storage: storage}, nil
}

// resolve resolves pointer through storage; an error names it.
func resolve(ctx context.Context, storage sdk.CheckpointStorage, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	loc, err := storage.ResolveCheckpoint(ctx, pointer)
	if err != nil {
		return loc, fmt.Errorf("resolve %s: %w", pointer, err)
	}
	return loc, nil
}

// jobAccess returns the storage access of the checkpoint's own job, to write or dispose
// of its checkpoints. It does not initialize the job's base locations: that would remove
// the checkpoint a running job is writing.
func jobAccess(ctx context.Context, storage sdk.CheckpointStorage, job string) (sdk.CheckpointStorageAccess, error) {
	a, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("checkpoint storage of job %q: %w", job, err)
	}
	return a, nil
}

// Kind returns "savepoint" or "checkpoint".
func (c *Checkpoint) Kind() string {
	if c.Metadata.Savepoint {
		return "savepoint"
	}
	return "checkpoint"
}

// String names the checkpoint in messages: "checkpoint 7 of job "wc" (POINTER)".
func (c *Checkpoint) String() string {
	return fmt.Sprintf("%s %d of job %q (%s)", c.Kind(), c.Metadata.CheckpointID, c.Metadata.JobID, c.Location.ExternalPointer)
}

// Operator returns the state of operator id, or an error naming the operators there are.
func (c *Checkpoint) Operator(id string) (*checkpoint.OperatorState, error) {
	if op := c.Metadata.Operator(id); op != nil {
		return op, nil
	}
	var ids []string
	for _, op := range c.Metadata.Operators {
		ids = append(ids, op.ID)
	}
	return nil, fmt.Errorf("%s has no operator %q; its operators: %s", c, id, quoteList(ids))
}

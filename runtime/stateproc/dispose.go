package stateproc

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// ErrInUse says a checkpoint may still be needed: Dispose refuses it unless forced.
var ErrInUse = errors.New("checkpoint may still be in use")

// Disposed is what Dispose deleted.
type Disposed struct {
	// Location is the checkpoint or savepoint deleted.
	Location sdk.CompletedCheckpointStorageLocation
	// Metadata is its metadata; nil when it could not be read (a forced disposal).
	Metadata *checkpoint.Metadata
	// SharedLeft are the shared streams it referenced, which Dispose leaves in place:
	// other checkpoints, of its job or of jobs restored from it, may reference them.
	SharedLeft int
}

// Dispose deletes the completed checkpoint or savepoint pointer resolves to, through
// storage (sdk.CheckpointStorageAccess.DisposeCheckpoint: its metadata first, then its
// exclusive state); access reads its metadata. A pointer that does not resolve is an
// error naming it. Without force it refuses, with an error wrapping ErrInUse:
//   - the newest completed checkpoint of its job, which a running job would restore after
//     a failure, and `run --from latest` would;
//   - a checkpoint whose metadata cannot be read, since it cannot tell whose it is.
//
// Savepoints are not checked against running jobs: a job restored from a savepoint needs
// it until the job's first checkpoint completes.
func Dispose(ctx context.Context, storage sdk.CheckpointStorage, access sdk.CheckpointStorageAccess, pointer string, force bool) (*Disposed, error) {
	loc, err := resolve(ctx, storage, pointer)
	if err != nil {
		return nil, err
	}
	d := &Disposed{Location: loc}
	m, err := checkpoint.Load(ctx, access, loc)
	if err != nil && !force {
		return nil, fmt.Errorf("checkpoint pointer %q: cannot read its metadata, so cannot tell whether a job still needs it (dispose of it anyway with --force): %w: %w", pointer, ErrInUse, err)
	}
	if err == nil {
		d.Metadata, d.SharedLeft = m, len(checkpoint.SharedRefs(m))
		if access, err = jobAccess(ctx, storage, m.JobID); err != nil {
			return nil, err
		}
		defer access.Close()
		if !m.Savepoint && !force {
			if err := refuseNewest(ctx, access, loc, m); err != nil {
				return nil, err
			}
		}
	}
	if err := access.DisposeCheckpoint(ctx, loc); err != nil {
		return nil, fmt.Errorf("dispose of %s: %w", loc.ExternalPointer, err)
	}
	return d, nil
}

// refuseNewest returns an error wrapping ErrInUse when m, at loc, is the newest completed
// checkpoint of its job.
func refuseNewest(ctx context.Context, access sdk.CheckpointStorageAccess, loc sdk.CompletedCheckpointStorageLocation, m *checkpoint.Metadata) error {
	list, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		return fmt.Errorf("list the checkpoints of job %q: %w", m.JobID, err)
	}
	if len(list) == 0 {
		return nil
	}
	newest := list[len(list)-1]
	if newest.ExternalPointer != loc.ExternalPointer && newest.CheckpointID != m.CheckpointID {
		return nil
	}
	return fmt.Errorf("checkpoint %d (%s) is the newest completed checkpoint of job %q: a running job would restore it after a failure, and `run --from latest` would (dispose of it anyway with --force): %w",
		m.CheckpointID, loc.ExternalPointer, m.JobID, ErrInUse)
}

package stateproc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/storagepath"
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

// DisposeOptions say what Dispose may dispose of.
type DisposeOptions struct {
	// Force disposes of the newest completed checkpoint of a job, and of a checkpoint
	// whose metadata cannot be read.
	Force bool
	// Dirs are the configured directories, by their keys (execution.checkpointing.dir,
	// execution.checkpointing.savepoint-dir); empty ones are not configured. Dispose
	// refuses a checkpoint or savepoint in a directory outside all of them.
	Dirs map[string]string
	// Outside disposes of a checkpoint or savepoint outside Dirs too.
	Outside bool
}

// Dispose deletes the completed checkpoint or savepoint pointer resolves to, through
// storage (sdk.CheckpointStorageAccess.DisposeCheckpoint: its metadata first, then the
// state files it holds, then its directory once empty; fsstorage leaves the directory,
// and names the entries it did not write there, when there are any); access reads its
// metadata. A pointer that does not resolve is an error naming it. Unless opts.Outside,
// it refuses a checkpoint whose directory lies (after symbolic links) outside every
// directory of opts.Dirs, with an error wrapping ErrOutside; when none is configured (a
// storage without directories) there is nothing to lie outside of. Without opts.Force it
// refuses, with an error wrapping ErrInUse:
//   - the newest completed checkpoint of its job, which a running job would restore after
//     a failure, and `run --from latest` would;
//   - a checkpoint whose metadata cannot be read, since it cannot tell whose it is.
//
// Savepoints are not checked against running jobs: a job restored from a savepoint needs
// it until the job's first checkpoint completes.
func Dispose(ctx context.Context, storage sdk.CheckpointStorage, access sdk.CheckpointStorageAccess, pointer string, opts DisposeOptions) (*Disposed, error) {
	loc, err := resolve(ctx, storage, pointer)
	if err != nil {
		return nil, err
	}
	if !opts.Outside {
		if err := refuseOutside(loc, opts.Dirs); err != nil {
			return nil, err
		}
	}
	d := &Disposed{Location: loc}
	m, err := checkpoint.Load(ctx, access, loc)
	if err != nil && !opts.Force {
		return nil, fmt.Errorf("checkpoint pointer %q: cannot read its metadata, so cannot tell whether a job still needs it (dispose of it anyway with --force): %w: %w", pointer, ErrInUse, err)
	}
	if err == nil {
		d.Metadata = m
		if !m.Savepoint { // a savepoint keeps its shared streams inside it: they go with it
			d.SharedLeft = len(checkpoint.SharedRefs(m))
		}
		if access, err = jobAccess(ctx, storage, m.JobID); err != nil {
			return nil, err
		}
		defer access.Close()
		if !m.Savepoint && !opts.Force {
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

// ErrOutside says a checkpoint lies outside the configured directories: Dispose refuses it
// unless told otherwise.
var ErrOutside = errors.New("outside the configured directories")

// refuseOutside returns an error wrapping ErrOutside when loc's directory lies outside
// every configured directory of dirs.
func refuseOutside(loc sdk.CompletedCheckpointStorageLocation, dirs map[string]string) error {
	if !storagepath.InDirectory(loc.ExternalPointer) {
		return nil
	}
	var named []string
	for _, key := range slices.Sorted(maps.Keys(dirs)) {
		dir := dirs[key]
		if dir == "" {
			continue
		}
		in, err := storagepath.Within(dir, loc.ExternalPointer)
		if err != nil {
			return fmt.Errorf("dispose of %s: %w", loc.ExternalPointer, err)
		}
		if in {
			return nil
		}
		named = append(named, fmt.Sprintf("%s '%s'", key, dir))
	}
	if len(named) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to dispose of %s: it lies outside %s, and dispose deletes only in the configured directories (dispose of it anyway with --force-outside): %w",
		loc.ExternalPointer, strings.Join(named, " and "), ErrOutside)
}

// refuseNewest returns an error wrapping ErrInUse when m, at loc, is the newest completed
// checkpoint of its job in the order `run --from latest` uses (checkpoint.Newer: the
// highest lease epoch, then the highest id), among those whose metadata loads.
func refuseNewest(ctx context.Context, access sdk.CheckpointStorageAccess, loc sdk.CompletedCheckpointStorageLocation, m *checkpoint.Metadata) error {
	list, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		return fmt.Errorf("list the checkpoints of job %q: %w", m.JobID, err)
	}
	for _, l := range slices.Backward(list) { // a newer one is most likely among the last
		if l.ExternalPointer == loc.ExternalPointer {
			continue
		}
		if other, err := checkpoint.Load(ctx, access, l); err == nil && other.JobID == m.JobID && checkpoint.Newer(other, m) {
			return nil
		}
	}
	if len(list) == 0 {
		return nil
	}
	return fmt.Errorf("checkpoint %d (%s) is the newest completed checkpoint of job %q: a running job would restore it after a failure, and `run --from latest` would (dispose of it anyway with --force): %w",
		m.CheckpointID, loc.ExternalPointer, m.JobID, ErrInUse)
}

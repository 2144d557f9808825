package jmstorage

import (
	"context"
	"io/fs"

	"github.com/flowstate/flowstate/sdk"
)

// location is one checkpoint or savepoint being written.
type location struct {
	st        *Storage
	job       string
	id        int64
	name      string // chk-N or savepoint-...
	savepoint bool
	// disk receives the checkpoint file: at <dir>/<job>/chk-N or in the savepoint
	// directory; nil for a checkpoint kept in memory only.
	disk sdk.CheckpointStorageLocation

	// Guarded by st.mu.
	state locState
	owned map[string]struct{}
}

var _ sdk.CheckpointStorageLocation = (*location)(nil)

func newLocation(st *Storage, job string, id int64, name string, disk sdk.CheckpointStorageLocation, savepoint bool) *location {
	l := &location{st: st, job: job, id: id, name: name, disk: disk, savepoint: savepoint, owned: make(map[string]struct{})}
	st.addPending(l)
	return l
}

// pointer is the external pointer the location has once complete.
func (l *location) pointer() string {
	if l.disk != nil {
		return l.disk.LocationReference()
	}
	return refScheme + l.job + "/" + l.name
}

// writableLocked returns an error unless the location still accepts state and metadata.
// l.st.mu must be held.
func (l *location) writableLocked() error {
	switch l.state {
	case locPending:
		return nil
	case locFinalizing, locCompleted:
		return errs.New(fs.ErrExist, "checkpoint %q is already complete (metadata exists)", l.pointer())
	default:
		return errs.New(sdk.ErrInvalidArgument, "checkpoint location %q was disposed", l.pointer())
	}
}

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, errs.Wrap(err, "create state stream at %q", l.pointer())
	}
	if scope != sdk.ScopeExclusive && scope != sdk.ScopeShared {
		return nil, errs.New(sdk.ErrInvalidArgument, "unknown state scope %d", int(scope))
	}
	l.st.mu.Lock()
	err := l.writableLocked()
	l.st.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &stateStream{loc: l, scope: scope, max: l.st.cfg.maxStateSize, threshold: l.st.cfg.inlineThreshold}, nil
}

// CreateMetadataOutputStream implements sdk.CheckpointStorageLocation.
func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, errs.Wrap(err, "create metadata stream at %q", l.pointer())
	}
	l.st.mu.Lock()
	err := l.writableLocked()
	l.st.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &metadataStream{loc: l}, nil
}

// DisposeOnFailure implements sdk.CheckpointStorageLocation: it frees the location's state
// and removes its directory on disk, if any. Shared state is left to the runner.
func (l *location) DisposeOnFailure(ctx context.Context) error {
	l.st.disposeLocation(l)
	if l.disk == nil {
		return nil
	}
	return l.disk.DisposeOnFailure(ctx)
}

// LocationReference implements sdk.CheckpointStorageLocation: the pointer the checkpoint
// will have ("jm:<job>/chk-N", or its directory when written to disk).
func (l *location) LocationReference() string { return l.pointer() }

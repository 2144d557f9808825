package jmstorage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// location is one checkpoint or savepoint being written.
type location struct {
	st        *Storage
	job       string
	id        int64
	name      string // chk-N or savepoint-...
	savepoint bool
	// diskDir receives the checkpoint file: <dir>/<job>/chk-N, the savepoint directory,
	// or "" for a checkpoint kept in memory only.
	diskDir string

	// Guarded by st.mu.
	state locState
	owned map[string]struct{}
}

var _ sdk.CheckpointStorageLocation = (*location)(nil)

func newLocation(st *Storage, job string, id int64, name, diskDir string, savepoint bool) *location {
	l := &location{st: st, job: job, id: id, name: name, diskDir: diskDir, savepoint: savepoint, owned: make(map[string]struct{})}
	st.addPending(l)
	return l
}

// pointer is the external pointer the location has once complete.
func (l *location) pointer() string {
	if l.diskDir != "" {
		return l.diskDir
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
		return errorf(fs.ErrExist, "checkpoint %q is already complete (metadata exists)", l.pointer())
	default:
		return errorf(sdk.ErrInvalidArgument, "checkpoint location %q was disposed", l.pointer())
	}
}

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapf(err, "create state stream at %q", l.pointer())
	}
	if scope != sdk.ScopeExclusive && scope != sdk.ScopeShared {
		return nil, errorf(sdk.ErrInvalidArgument, "unknown state scope %d", int(scope))
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
		return nil, wrapf(err, "create metadata stream at %q", l.pointer())
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
func (l *location) DisposeOnFailure(_ context.Context) error {
	l.st.disposeLocation(l)
	if l.diskDir == "" {
		return nil
	}
	meta := filepath.Join(l.diskDir, layout.MetadataFile)
	if err := os.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "dispose failed checkpoint: remove '%s'", meta)
	}
	if err := os.RemoveAll(l.diskDir); err != nil {
		return wrapf(err, "dispose failed checkpoint: remove '%s'", l.diskDir)
	}
	return nil
}

// LocationReference implements sdk.CheckpointStorageLocation: the pointer the checkpoint
// will have ("jm:<job>/chk-N", or its directory when written to disk).
func (l *location) LocationReference() string { return l.pointer() }

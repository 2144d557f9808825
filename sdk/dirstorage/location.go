package dirstorage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// location is the directory of one checkpoint (chk-N) or savepoint being written.
type location struct {
	s  *Storage
	id int64
	// dir receives exclusive state and the metadata.
	dir string
	// sharedDir receives shared state: the job's shared/ for checkpoints, dir itself for
	// (self-contained) savepoints.
	sharedDir string

	// mu guards created and published.
	mu sync.Mutex
	// created are the exclusive state files the location's streams and local state files
	// created in dir: what DisposeOnFailure removes when another writer published dir's
	// metadata (see DisposeOnFailure).
	created []string
	// published says the location's metadata stream published dir's _metadata.
	published bool
}

// track records name, an exclusive state file created in the location's directory.
func (l *location) track(name string) {
	l.mu.Lock()
	l.created = append(l.created, name)
	l.mu.Unlock()
}

var _ sdk.CheckpointStorageLocation = (*location)(nil)

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, l.s.errs.Wrap(err, "create state stream in '%s'", l.dir)
	}
	dir, err := l.scopeDir(scope)
	if err != nil {
		return nil, err
	}
	st := newStateStream(l.s, dir, scope)
	if scope == sdk.ScopeExclusive {
		st.onCreate = l.track
	}
	return st, nil
}

// scopeDir is the directory of the location's state of scope.
func (l *location) scopeDir(scope sdk.Scope) (string, error) {
	switch scope {
	case sdk.ScopeExclusive:
		return l.dir, nil
	case sdk.ScopeShared:
		return l.sharedDir, nil
	}
	return "", l.s.errs.New(sdk.ErrInvalidArgument, "unknown state scope %d", int(scope))
}

// CreateMetadataOutputStream implements sdk.CheckpointStorageLocation. The metadata goes to
// a temporary file in the location's directory until CloseAndFinalize publishes it.
func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, l.s.errs.Wrap(err, "create metadata stream in '%s'", l.dir)
	}
	final := filepath.Join(l.dir, layout.MetadataFile)
	if _, err := l.s.fs.Stat(final); err == nil {
		return nil, l.s.errs.New(fs.ErrExist, "%s", l.publishedByAnother())
	}
	return newMetadataStream(l)
}

// DisposeOnFailure implements sdk.CheckpointStorageLocation: it removes the metadata, if
// any, then the whole directory. Shared state is left to the runner.
//
// A _metadata the location did not publish is another writer's: of two writers of one
// chk-N (a runner that lost the job, whose write was already under way, and its
// successor), the one whose publication failed leaves that metadata and the directory
// to the winner, and removes only the exclusive state files it created itself. (A
// winner's metadata that lands while this removal runs can still be removed with the
// directory: an FS offers no atomic "remove the directory unless it holds _metadata".)
func (l *location) DisposeOnFailure(_ context.Context) error {
	meta := filepath.Join(l.dir, layout.MetadataFile)
	l.mu.Lock()
	published, created := l.published, slices.Clone(l.created)
	l.mu.Unlock()
	if !published {
		if _, err := l.s.fs.Stat(meta); err == nil {
			for _, name := range created {
				if err := l.s.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return l.s.errs.Wrap(err, "dispose failed checkpoint: remove state file '%s' (the checkpoint's metadata '%s' is another writer's, left in place)", name, meta)
				}
			}
			return nil
		}
	}
	if err := l.s.fs.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l.s.errs.Wrap(err, "dispose failed checkpoint: remove '%s'", meta)
	}
	if err := removeDir(l.s.fs, l.dir); err != nil {
		return l.s.errs.Wrap(err, "dispose failed checkpoint: remove '%s'", l.dir)
	}
	return nil
}

// publishedByAnother says that the location's _metadata exists though this writer has
// not published it, naming the location as users see it.
func (l *location) publishedByAnother() string {
	return fmt.Sprintf("checkpoint %d at %s: its metadata file %s already exists: another writer published the checkpoint first "+
		"(a runner that lost the job while its metadata was being written, or a second runner of the job); this writer's checkpoint %d is not published, "+
		"and the next checkpoint takes a fresh id", l.id, l.LocationReference(), layout.MetadataFile, l.id)
}

// removeDirTries bounds the passes of removeDir.
const removeDirTries = 10

// removeDir removes dir and everything in it. A stream of the failed checkpoint that is
// still being written (a subtask late with its snapshot, a metadata publication the
// runner gave up on) can create a file in dir while RemoveAll runs, which then fails with
// "directory not empty" and would leave a checkpoint directory without metadata behind:
// removeDir tries again until dir is gone, after which no file can be created in it.
func removeDir(fsys FS, dir string) error {
	var err error
	for range removeDirTries {
		if err = fsys.RemoveAll(dir); err == nil {
			return nil
		}
		if _, serr := fsys.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
	}
	return err
}

// LocationReference implements sdk.CheckpointStorageLocation: the directory, as its
// pointer will be once complete.
func (l *location) LocationReference() string { return l.s.pointer(l.dir) }

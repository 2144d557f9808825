package fsstorage

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// location is the directory of one checkpoint (chk-N) or savepoint being written.
type location struct {
	fs  fsys.FS
	cfg config
	id  int64
	// dir receives exclusive state and the metadata.
	dir string
	// sharedDir receives shared state: the job's shared/ for checkpoints, dir itself for
	// (self-contained) savepoints.
	sharedDir string
	savepoint bool
}

var _ sdk.CheckpointStorageLocation = (*location)(nil)

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapf(err, "create state stream in '%s'", l.dir)
	}
	dir := l.dir
	switch scope {
	case sdk.ScopeExclusive:
	case sdk.ScopeShared:
		dir = l.sharedDir
	default:
		return nil, errorf(sdk.ErrInvalidArgument, nil, "unknown state scope %d", int(scope))
	}
	return newStateStream(l.fs, dir, scope, l.cfg.inlineThreshold, l.cfg.writeBufferSize), nil
}

// CreateMetadataOutputStream implements sdk.CheckpointStorageLocation. The metadata goes to
// a temporary file in the location's directory until CloseAndFinalize publishes it.
func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapf(err, "create metadata stream in '%s'", l.dir)
	}
	final := filepath.Join(l.dir, layout.MetadataFile)
	if _, err := l.fs.Stat(final); err == nil {
		return nil, errorf(fs.ErrExist, nil, "metadata file '%s' already exists", final)
	}
	return newMetadataStream(l)
}

// DisposeOnFailure implements sdk.CheckpointStorageLocation: it removes the metadata, if
// any, then the whole directory. Shared state is left to the runner.
func (l *location) DisposeOnFailure(_ context.Context) error {
	meta := filepath.Join(l.dir, layout.MetadataFile)
	if err := l.fs.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "dispose failed checkpoint: remove '%s'", meta)
	}
	if err := removeDir(l.fs, l.dir); err != nil {
		return wrapf(err, "dispose failed checkpoint: remove '%s'", l.dir)
	}
	return nil
}

// removeDirTries bounds the passes of removeDir.
const removeDirTries = 10

// removeDir removes dir and everything in it. A stream of the failed checkpoint that is
// still being written (a subtask late with its snapshot, a metadata publication the
// runner gave up on) can create a file in dir while RemoveAll runs, which then fails with
// "directory not empty" and would leave a checkpoint directory without metadata behind:
// removeDir tries again until dir is gone, after which no file can be created in it.
func removeDir(store fsys.FS, dir string) error {
	var err error
	for range removeDirTries {
		if err = store.RemoveAll(dir); err == nil {
			return nil
		}
		if _, serr := store.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
	}
	return err
}

// LocationReference implements sdk.CheckpointStorageLocation: the directory's path.
func (l *location) LocationReference() string { return pointerOf(l.dir) }

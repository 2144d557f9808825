package dirstorage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// localLocation is a location over an FS whose files are local files (LocalPather): it
// implements sdk.LocalStateFactory, so that a keyed backend in another plugin process
// writes its state files itself. Like the access types (see newAccess), the location
// implements the interface exactly when the FS allows it, since the runner discovers it
// with a type assertion.
type localLocation struct {
	*location
	mu    sync.Mutex
	files map[string]localFile // by local path: the files created and not yet ended
}

// localFile is a file CreateLocalStateFile created: its name in the FS and its scope.
type localFile struct {
	name  string
	scope sdk.Scope
}

var _ sdk.LocalStateFactory = (*localLocation)(nil)

// newLocation returns the location of checkpoint id writing exclusive state to dir and
// shared state to sharedDir, with the optional interfaces the FS allows.
func (s *Storage) newLocation(id int64, dir, sharedDir string) sdk.CheckpointStorageLocation {
	l := &location{s: s, id: id, dir: dir, sharedDir: sharedDir}
	if _, ok := s.fs.(LocalPather); ok {
		return &localLocation{location: l, files: map[string]localFile{}}
	}
	return l
}

// CreateLocalStateFile implements sdk.LocalStateFactory: an empty file under a random
// name in the scope's directory, as a stream's would be.
func (l *localLocation) CreateLocalStateFile(ctx context.Context, scope sdk.Scope) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", l.s.errs.Wrap(err, "create state file in '%s'", l.dir)
	}
	dir, err := l.scopeDir(scope)
	if err != nil {
		return "", err
	}
	f, name, err := l.s.createStateFile(dir)
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		_ = l.s.fs.Remove(name)
		return "", l.s.errs.Wrap(err, "create state file '%s'", name)
	}
	path := l.s.fs.(LocalPather).LocalPath(name)
	if path == "" { // not a local file after all: the caller uses a stream
		_ = l.s.fs.Remove(name)
		return "", nil
	}
	l.mu.Lock()
	l.files[path] = localFile{name: name, scope: scope}
	l.mu.Unlock()
	if scope == sdk.ScopeExclusive {
		l.track(name)
	}
	return path, nil
}

// take removes path from the files created and not yet ended and returns it.
func (l *localLocation) take(path string) (localFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.files[path]
	if !ok {
		return localFile{}, l.s.errs.New(sdk.ErrInvalidArgument, "'%s' is not a state file this location created and has not yet published or discarded", path)
	}
	delete(l.files, path)
	return f, nil
}

// PublishLocalStateFile implements sdk.LocalStateFactory. The file must hold size bytes.
// State smaller than the inline threshold comes back inline and its file is removed, as a
// stream's would; larger state is synced to its file.
func (l *localLocation) PublishLocalStateFile(ctx context.Context, path string, scope sdk.Scope, size int64, checksum uint32) (sdk.StreamStateHandle, error) {
	f, err := l.take(path)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	if scope != f.scope {
		_ = l.s.fs.Remove(f.name)
		return sdk.StreamStateHandle{}, l.s.errs.New(sdk.ErrInvalidArgument, "state file '%s' was created for scope %d, published for scope %d", f.name, int(f.scope), int(scope))
	}
	h, err := l.publish(ctx, path, f, size)
	if err != nil {
		_ = l.s.fs.Remove(f.name)
		return sdk.StreamStateHandle{}, err
	}
	return h, nil
}

// publish checks f's size, then inlines or syncs it.
func (l *localLocation) publish(ctx context.Context, path string, f localFile, size int64) (sdk.StreamStateHandle, error) {
	if err := ctx.Err(); err != nil {
		return sdk.StreamStateHandle{}, l.s.errs.Wrap(err, "publish state file '%s'", f.name)
	}
	fi, err := l.s.fs.Stat(f.name)
	if err != nil {
		return sdk.StreamStateHandle{}, l.s.errs.Wrap(err, "publish state file '%s'", f.name)
	}
	if fi.Size != size {
		return sdk.StreamStateHandle{}, l.s.errs.New(sdk.ErrCorrupt, "state file '%s' holds %d bytes, its writer wrote %d", f.name, fi.Size, size)
	}
	if size < l.s.cfg.InlineThreshold {
		inline, err := l.readAll(f.name, size)
		if err != nil {
			return sdk.StreamStateHandle{}, err
		}
		if err := l.s.fs.Remove(f.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return sdk.StreamStateHandle{}, l.s.errs.Wrap(err, "remove state file '%s'", f.name)
		}
		return sdk.StreamStateHandle{Inline: inline, Size: size, Scope: f.scope}, nil
	}
	// The file is a plain local file (LocalPather), written and closed by another
	// process: syncing any descriptor of it makes its data durable.
	file, err := os.Open(path)
	if err != nil {
		return sdk.StreamStateHandle{}, l.s.errs.Wrap(err, "sync state file '%s'", f.name)
	}
	err = file.Sync()
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sdk.StreamStateHandle{}, l.s.errs.Wrap(err, "sync state file '%s'", f.name)
	}
	return sdk.StreamStateHandle{Ref: l.s.ref(f.name), Size: size, Scope: f.scope}, nil
}

// readAll reads the size bytes of file name.
func (l *localLocation) readAll(name string, size int64) ([]byte, error) {
	rc, err := l.s.fs.Open(name)
	if err != nil {
		return nil, l.s.errs.Wrap(err, "read state file '%s'", name)
	}
	defer rc.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, l.s.errs.Wrap(err, "read state file '%s'", name)
	}
	return b, nil
}

// DiscardLocalStateFile implements sdk.LocalStateFactory.
func (l *localLocation) DiscardLocalStateFile(_ context.Context, path string) error {
	f, err := l.take(path)
	if err != nil {
		return err
	}
	if err := l.s.fs.Remove(f.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l.s.errs.Wrap(err, "remove state file '%s'", f.name)
	}
	return nil
}

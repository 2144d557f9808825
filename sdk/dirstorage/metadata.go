package dirstorage

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// metadataStream writes a checkpoint's metadata to a temporary file and publishes it as
// _metadata on CloseAndFinalize.
type metadataStream struct {
	loc  *location
	file File
	tmp  string
	err  error
	done bool
}

var _ sdk.MetadataOutputStream = (*metadataStream)(nil)

func newMetadataStream(l *location) (*metadataStream, error) {
	suffix, err := layout.RandomHex(8)
	if err != nil {
		return nil, l.s.errs.Wrap(err, "metadata stream in '%s'", l.dir)
	}
	tmp := filepath.Join(l.dir, layout.MetadataTempPrefix+suffix)
	f, err := l.s.fs.Create(tmp)
	if err != nil {
		return nil, l.s.errs.Wrap(err, "create temporary metadata file '%s'", tmp)
	}
	return &metadataStream{loc: l, file: f, tmp: tmp}, nil
}

// Write implements io.Writer.
func (m *metadataStream) Write(p []byte) (int, error) {
	if m.done {
		return 0, m.loc.s.errs.New(errStreamClosed, "write metadata '%s'", m.tmp)
	}
	if m.err != nil {
		return 0, m.err
	}
	n, err := m.file.Write(p)
	if err != nil {
		m.err = m.loc.s.errs.Wrap(err, "write temporary metadata file '%s'", m.tmp)
		m.discard()
		return n, m.err
	}
	return n, nil
}

// discard closes and removes the temporary file.
func (m *metadataStream) discard() error {
	if m.file == nil {
		return nil
	}
	m.file.Close()
	m.file = nil
	if err := m.loc.s.fs.Remove(m.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m.loc.s.errs.Wrap(err, "remove temporary metadata file '%s'", m.tmp)
	}
	return nil
}

// CloseAndFinalize implements sdk.MetadataOutputStream. It syncs the directories holding
// the checkpoint's state files, syncs the metadata, publishes it as _metadata without
// replacing an existing one, and syncs the directory entries.
func (m *metadataStream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	var none sdk.CompletedCheckpointStorageLocation
	s := m.loc.s
	if m.done {
		return none, s.errs.New(errStreamClosed, "finalize metadata in '%s'", m.loc.dir)
	}
	m.done = true
	if m.err != nil {
		return none, m.err
	}
	if err := ctx.Err(); err != nil {
		m.discard()
		return none, s.errs.Wrap(err, "finalize metadata in '%s'", m.loc.dir)
	}
	if err := m.finalize(); err != nil {
		m.discard()
		return none, err
	}
	loc, err := s.completedAt(m.loc.dir)
	if err != nil {
		return none, err
	}
	loc.CheckpointID = m.loc.id
	return loc, nil
}

// finalize does the durable, atomic publication of the metadata.
func (m *metadataStream) finalize() error {
	s, dir := m.loc.s, m.loc.dir
	syncDirs := []string{dir}
	if m.loc.sharedDir != dir {
		syncDirs = append(syncDirs, m.loc.sharedDir)
	}
	for _, d := range syncDirs {
		if err := s.fs.SyncDir(d); err != nil {
			return s.errs.Wrap(err, "sync state directory '%s'", d)
		}
	}
	if err := m.file.Sync(); err != nil {
		return s.errs.Wrap(err, "sync temporary metadata file '%s'", m.tmp)
	}
	f := m.file
	m.file = nil
	if err := f.Close(); err != nil {
		s.fs.Remove(m.tmp)
		return s.errs.Wrap(err, "close temporary metadata file '%s'", m.tmp)
	}
	final := filepath.Join(dir, layout.MetadataFile)
	if err := s.fs.RenameNoReplace(m.tmp, final); err != nil {
		// The temporary file may or may not still exist; remove it either way.
		s.fs.Remove(m.tmp)
		if errors.Is(err, fs.ErrExist) {
			return s.errs.Wrap(err, "%s", m.loc.publishedByAnother())
		}
		return s.errs.Wrap(err, "publish metadata file '%s'", final)
	}
	m.loc.mu.Lock()
	m.loc.published = true
	m.loc.mu.Unlock()
	if err := s.fs.SyncDir(dir); err != nil {
		return s.errs.Wrap(err, "sync checkpoint directory '%s'", dir)
	}
	if err := s.fs.SyncDir(filepath.Dir(dir)); err != nil {
		return s.errs.Wrap(err, "sync directory '%s'", filepath.Dir(dir))
	}
	return nil
}

// Close implements sdk.MetadataOutputStream: without CloseAndFinalize it removes the
// metadata written so far.
func (m *metadataStream) Close() error {
	if m.done {
		return nil
	}
	m.done = true
	return m.discard()
}

package dirstorage

import (
	"fmt"
	"io"
	"os"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// Local is the FS of the local disk (and of mounted network file systems). Its names are
// local paths. It keeps lease records with sdk/filelease and its files are local files.
type Local struct{}

var (
	_ FS          = Local{}
	_ LeaseFS     = Local{}
	_ LocalPather = Local{}
)

const (
	filePerm = 0o644
	dirPerm  = 0o755
)

// Create implements FS with O_CREATE|O_EXCL.
func (Local) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
}

// Open implements FS.
func (Local) Open(name string) (io.ReadCloser, error) { return os.Open(name) }

// Stat implements FS.
func (Local) Stat(name string) (FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Size: fi.Size(), ModTime: fi.ModTime(), IsDir: fi.IsDir(), IsRegular: fi.Mode().IsRegular()}, nil
}

// RenameNoReplace implements FS with a hard link (which fails when newname exists)
// followed by the removal of oldname. Once the link exists the rename has happened: a
// failure to remove oldname then leaves a second name of the same file, which is not
// reported (InitializeBaseLocationsForCheckpoint removes such leftovers).
func (Local) RenameNoReplace(oldname, newname string) error {
	if err := os.Link(oldname, newname); err != nil {
		return err
	}
	_ = os.Remove(oldname)
	return nil
}

// Remove implements FS.
func (Local) Remove(name string) error { return os.Remove(name) }

// RemoveAll implements FS.
func (Local) RemoveAll(name string) error { return os.RemoveAll(name) }

// List implements FS.
func (Local) List(dir string) ([]DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, len(entries))
	for i, e := range entries {
		out[i] = DirEntry{Name: e.Name(), IsDir: e.IsDir()}
	}
	return out, nil
}

// Mkdir implements FS.
func (Local) Mkdir(name string) error { return os.Mkdir(name, dirPerm) }

// MkdirAll implements FS.
func (Local) MkdirAll(name string) error { return os.MkdirAll(name, dirPerm) }

// SyncDir implements FS by fsyncing the directory.
func (Local) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync directory %s: %w", name, err)
	}
	return d.Close()
}

// LeaseStore implements LeaseFS with sdk/filelease: link(2) creates the record, a rename(2)
// under flock(2) replaces it.
func (Local) LeaseStore(name string) (sdk.LeaseStore, error) { return filelease.New(name), nil }

// LocalPath implements LocalPather: every name is a local path.
func (Local) LocalPath(name string) string { return name }

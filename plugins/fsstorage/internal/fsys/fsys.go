// Package fsys is the small file-system interface fsstorage writes through. The local-disk
// implementation is Local; other stores (an S3 client, a fault-injecting wrapper in tests)
// plug in by implementing FS.
//
// Names are the store's own paths. Errors keep the identity of io/fs errors
// (fs.ErrNotExist, fs.ErrExist) so that callers can tell a missing file from a failure.
package fsys

import (
	"io"
	"time"
)

// File is a file being written.
type File interface {
	io.Writer
	// Sync makes the bytes written so far durable.
	Sync() error
	// Close releases the file. It does not imply Sync.
	Close() error
}

// FileInfo describes a file or directory.
type FileInfo struct {
	// Size is the file's size in bytes.
	Size int64
	// ModTime is the file's last modification time.
	ModTime time.Time
	// IsDir reports a directory.
	IsDir bool
	// IsRegular reports a regular file.
	IsRegular bool
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	// Name is the entry's base name.
	Name string
	// IsDir reports a directory.
	IsDir bool
}

// FS is the set of file operations fsstorage needs.
type FS interface {
	// Create creates name for writing. It fails with an error wrapping fs.ErrExist when
	// name exists.
	Create(name string) (File, error)
	// Open opens name for reading.
	Open(name string) (io.ReadCloser, error)
	// Stat describes name.
	Stat(name string) (FileInfo, error)
	// RenameNoReplace moves oldname to newname, failing with an error wrapping fs.ErrExist
	// when newname exists. It is atomic: newname appears whole or not at all.
	RenameNoReplace(oldname, newname string) error
	// Remove deletes a file or an empty directory; a missing one is an error wrapping
	// fs.ErrNotExist.
	Remove(name string) error
	// RemoveAll deletes name and everything below it; a missing one is not an error.
	RemoveAll(name string) error
	// List returns the entries of directory dir, sorted by name.
	List(dir string) ([]DirEntry, error)
	// Mkdir creates one directory, failing with an error wrapping fs.ErrExist when it
	// exists.
	Mkdir(name string) error
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(name string) error
	// SyncDir makes the entries of directory name (files created, renamed or removed in
	// it) durable.
	SyncDir(name string) error
}

package dirstorage

import (
	"io"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// FS is the file system a Storage keeps checkpoints in. Local is the local disk's;
// fsstorage adds S3; the third-party example keeps files in bbolt databases.
//
// Names are the FS's own: clean absolute slash-separated paths that path/filepath handles
// lexically (Join, Dir, Base, Rel), so that "/ckpt/job/chk-3/_metadata" is in
// "/ckpt/job/chk-3". An FS with URIs of its own ("s3://bucket/key") also implements Namer.
// Errors keep the identity of io/fs errors (fs.ErrNotExist, fs.ErrExist), which is how the
// Storage tells a missing file from a failure.
//
// The names a Storage makes lie in a job's directory (<dir>/<job>, see sdk/layout) or a
// savepoint directory (<base>/savepoint-...), except the parents of those directories,
// which it only creates (MkdirAll) and syncs (SyncDir). An FS may therefore keep each
// job's and each savepoint's tree in a container of its own (the third-party example keeps
// each in a bbolt file). ResolveCheckpoint, OpenState and DisposeCheckpoint also pass the
// names a user's pointer or a state handle gives, wherever they lead: Stat must answer for
// any name, fs.ErrNotExist for one the FS does not have.
type FS interface {
	// Create creates name for writing; its directory exists. It fails with an error
	// wrapping fs.ErrExist when name exists, either now or, on a store that only learns it
	// when the file is published, at Sync.
	Create(name string) (File, error)
	// Open opens name for reading.
	Open(name string) (io.ReadCloser, error)
	// Stat describes name.
	Stat(name string) (FileInfo, error)
	// RenameNoReplace moves the file oldname to newname in the same directory, failing
	// with an error wrapping fs.ErrExist when newname exists: of racing renames to one
	// name at most one succeeds. It is atomic: newname appears whole or not at all.
	RenameNoReplace(oldname, newname string) error
	// Remove deletes a file or an empty directory; a missing one is an error wrapping
	// fs.ErrNotExist.
	Remove(name string) error
	// RemoveAll deletes name and everything below it; a missing one is not an error.
	RemoveAll(name string) error
	// List returns the entries of directory dir, sorted by name; a missing dir is an error
	// wrapping fs.ErrNotExist.
	List(dir string) ([]DirEntry, error)
	// Mkdir creates one directory, failing with an error wrapping fs.ErrExist when it
	// exists.
	Mkdir(name string) error
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(name string) error
	// SyncDir makes the entries of directory name (files created, renamed or removed in
	// it) durable. A store whose every change is durable when it returns does nothing.
	SyncDir(name string) error
}

// File is a file being written.
type File interface {
	io.Writer
	// Sync makes the bytes written so far durable. The Storage syncs every file it keeps
	// before it closes it.
	Sync() error
	// Close releases the file. It does not imply Sync.
	Close() error
}

// FileInfo describes a file or directory.
type FileInfo struct {
	// Size is the file's size in bytes.
	Size int64
	// ModTime is the file's last modification time; a completed checkpoint's time is its
	// _metadata file's.
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

// LeaseFS is implemented by a file system that can keep a job's lease record
// (sdk.LeaseStore: a compare-and-swap on one small record) in a file: Local with
// sdk/filelease, fsstorage's S3 with conditional PUTs (If-None-Match: * to create, If-Match
// on the ETag to replace). The accesses of a Storage over such a file system implement
// sdk.LeaseStore, with the record in <dir>/<job>/_lease; the others do not, and the runner
// keeps the lease on its own machine instead.
type LeaseFS interface {
	// LeaseStore returns the store of the lease record in the file name. It makes no
	// request.
	LeaseStore(name string) (sdk.LeaseStore, error)
}

// LocalPather is implemented by a file system whose files can be plain files on this
// machine. The accesses of a Storage over it implement sdk.LocalStateLocator, so that a
// keyed backend in another plugin process reads its state files directly.
type LocalPather interface {
	// LocalPath returns the local path of the file name, or "" when it is not a plain
	// local file (an object in a store).
	LocalPath(name string) string
}

// Namer is implemented by a file system with URIs of its own. Without it, names are local
// paths: users write them as paths or file:// URIs, pointers are paths and state handles
// file:// URIs.
type Namer interface {
	// Name returns the name of a URI of the file system's own; ok is false, with no error,
	// for anything else, which is then a local path or a file:// URI.
	Name(uri string) (name string, ok bool, err error)
	// URI returns the URI users and state handles see for name, or "" when name is a local
	// path.
	URI(name string) string
}

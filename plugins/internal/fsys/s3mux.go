package fsys

import (
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// Mux is an FS over both the local disk and S3, for a storage whose checkpoint directory,
// savepoint directory, savepoint targets and state handles may each be local or on S3.
//
// Its names are strings that path/filepath handles lexically like paths:
//   - an absolute local path ("/data/ckpts/job/chk-1") goes to Local;
//   - "s3:/bucket/key" (what filepath.Clean makes of "s3://bucket/key") goes to S3 as
//     "/bucket/key".
//
// MuxName turns a user's path or URI into a name and MuxURI turns a name back into the
// URI to show users and put in handles. filepath.Join, Dir, Base and Rel keep S3 names S3
// names, so code written for local paths works unchanged once it converts at the edges.
type Mux struct {
	// Local serves local paths, usually Local{}.
	Local FS
	// S3 serves S3 names; nil means S3 is not configured and S3 names fail.
	S3 FS
}

var (
	_ FS                     = Mux{}
	_ dirstorage.Namer       = Mux{}
	_ dirstorage.LocalPather = Mux{}
)

// muxS3Prefix starts every S3 name of a Mux.
const muxS3Prefix = "s3:/"

// IsMuxS3Name reports whether name is an S3 name of a Mux ("s3:/bucket/key").
func IsMuxS3Name(name string) bool { return strings.HasPrefix(name, muxS3Prefix) }

// MuxName returns the Mux name of an s3:// URI (any S3 scheme): "s3:/bucket/key". It
// returns ok == false, and no error, for anything that is not an S3 URI, which the caller
// treats as a local path or file:// URI.
func MuxName(uri string) (name string, ok bool, err error) {
	if !IsS3URI(uri) {
		return "", false, nil
	}
	n, err := S3Name(uri)
	if err != nil {
		return "", true, err
	}
	return "s3:" + n, true, nil
}

// MuxURI returns the URI of a Mux name: "s3://bucket/key" for an S3 name, "" for a local
// path (the caller makes its own file:// URI).
func MuxURI(name string) string {
	if !IsMuxS3Name(name) {
		return ""
	}
	return S3URI(strings.TrimPrefix(name, "s3:"))
}

// Name implements dirstorage.Namer with MuxName.
func (Mux) Name(uri string) (string, bool, error) { return MuxName(uri) }

// URI implements dirstorage.Namer with MuxURI.
func (Mux) URI(name string) string { return MuxURI(name) }

// LocalPath implements dirstorage.LocalPather: a local name is a local file when the local
// file system says so (dirstorage.Local does; a wrapper of the tests' own need not, and
// then reads go through it); an S3 name never is.
func (m Mux) LocalPath(name string) string {
	if lp, ok := m.Local.(dirstorage.LocalPather); ok && !IsMuxS3Name(name) {
		return lp.LocalPath(name)
	}
	return ""
}

// route returns the FS and its own name for a Mux name.
func (m Mux) route(name string) (FS, string, error) {
	if !IsMuxS3Name(name) {
		return m.Local, name, nil
	}
	if m.S3 == nil {
		return nil, "", &fs.PathError{Op: "s3", Path: MuxURI(name),
			Err: fmt.Errorf("S3 is not configured (set the %s option or AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID)", OptionS3Endpoint)}
	}
	return m.S3, strings.TrimPrefix(name, "s3:"), nil
}

// route2 routes two names that must be on the same FS.
func (m Mux) route2(a, b string) (FS, string, string, error) {
	if IsMuxS3Name(a) != IsMuxS3Name(b) {
		return nil, "", "", fmt.Errorf("rename %s to %s: between the local disk and S3: %w", a, b, fs.ErrInvalid)
	}
	f, na, err := m.route(a)
	if err != nil {
		return nil, "", "", err
	}
	_, nb, err := m.route(b)
	return f, na, nb, err
}

// Create implements FS.
func (m Mux) Create(name string) (File, error) {
	f, n, err := m.route(name)
	if err != nil {
		return nil, err
	}
	return f.Create(n)
}

// Open implements FS.
func (m Mux) Open(name string) (io.ReadCloser, error) {
	f, n, err := m.route(name)
	if err != nil {
		return nil, err
	}
	return f.Open(n)
}

// Stat implements FS.
func (m Mux) Stat(name string) (FileInfo, error) {
	f, n, err := m.route(name)
	if err != nil {
		return FileInfo{}, err
	}
	return f.Stat(n)
}

// RenameNoReplace implements FS; both names must be on the same FS.
func (m Mux) RenameNoReplace(oldname, newname string) error {
	f, o, n, err := m.route2(oldname, newname)
	if err != nil {
		return err
	}
	return f.RenameNoReplace(o, n)
}

// Remove implements FS.
func (m Mux) Remove(name string) error {
	f, n, err := m.route(name)
	if err != nil {
		return err
	}
	return f.Remove(n)
}

// RemoveAll implements FS.
func (m Mux) RemoveAll(name string) error {
	f, n, err := m.route(name)
	if err != nil {
		return err
	}
	return f.RemoveAll(n)
}

// List implements FS.
func (m Mux) List(dir string) ([]DirEntry, error) {
	f, n, err := m.route(dir)
	if err != nil {
		return nil, err
	}
	return f.List(n)
}

// Mkdir implements FS.
func (m Mux) Mkdir(name string) error {
	f, n, err := m.route(name)
	if err != nil {
		return err
	}
	return f.Mkdir(n)
}

// MkdirAll implements FS.
func (m Mux) MkdirAll(name string) error {
	f, n, err := m.route(name)
	if err != nil {
		return err
	}
	return f.MkdirAll(n)
}

// SyncDir implements FS.
func (m Mux) SyncDir(name string) error {
	f, n, err := m.route(name)
	if err != nil {
		return err
	}
	return f.SyncDir(n)
}

package disaggregated

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowstate/flowstate/plugins/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
)

// Remote is the object store the table files live on: whole objects, written once under a
// name and never changed, as S3 keeps them. A file:// directory (fileRemote) and an S3
// bucket below a key prefix (s3Remote) implement it.
type Remote interface {
	// Create stores size bytes read from r as the object name, only if no object has that
	// name (S3's conditional PUT with If-None-Match: *): when one has, it returns an error
	// wrapping fs.ErrExist and leaves that object alone. An object is visible whole or not
	// at all.
	Create(ctx context.Context, name string, r io.Reader, size int64) error
	// Open returns the bytes of the object name; a missing object is an error wrapping
	// fs.ErrNotExist that names it.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// Size returns the size of the object name (an error wrapping fs.ErrNotExist when it
	// is missing).
	Size(ctx context.Context, name string) (int64, error)
	// List returns the names of the objects whose names start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes the object name; a missing one is not an error.
	Delete(ctx context.Context, name string) error
	// String returns the store's URI, for errors and logs (never a secret).
	String() string
}

// openRemote returns the Remote of a URI: s3://bucket/prefix (any of fsys.IsS3URI's
// schemes) on the S3 client s3opts configure (see openS3Remote), or file:///abs/dir (or a
// plain absolute path), whose directory it creates.
func openRemote(ctx context.Context, uri string, s3opts sdk.Options) (Remote, error) {
	if fsys.IsS3URI(uri) {
		return openS3Remote(ctx, uri, s3opts)
	}
	dir := uri
	if strings.Contains(uri, "://") {
		u, err := url.Parse(uri)
		if err != nil {
			return nil, err
		}
		if u.Scheme != "file" {
			return nil, fmt.Errorf("scheme %q: want file:///absolute/dir or s3://bucket/prefix", u.Scheme)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file URI with host %q: want file:///absolute/path", u.Host)
		}
		dir = u.Path
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("want an absolute path, got %q", dir)
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create remote directory: %w", err)
	}
	return &fileRemote{dir: dir}, nil
}

// checkName refuses an object name of store r that is not a clean relative slash path
// inside it ("", "/abs", "../x", "a//b", "a/./b", "a/"): S3 would keep "a//b" as a key of
// its own where a directory takes it for "a/b", so both stores refuse such names.
func checkName(name string, r Remote) error {
	if name == "" || name == "." || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return fmt.Errorf("object name %q of %s: want a clean relative name inside the store: %w", name, r, fs.ErrInvalid)
	}
	return nil
}

// fileRemote is a Remote in a directory of a local (or mounted) file system. Objects are
// files; a name's '/' separates directories. Create writes a temporary file and links it
// into place (link(2) fails when the name exists), so an object appears whole and once.
type fileRemote struct {
	dir string
}

func (r *fileRemote) String() string { return "file://" + r.dir }

// path returns the file of the object name, refusing names that leave the directory.
func (r *fileRemote) path(name string) (string, error) {
	if err := checkName(name, r); err != nil {
		return "", err
	}
	return filepath.Join(r.dir, filepath.FromSlash(name)), nil
}

func (r *fileRemote) Create(ctx context.Context, name string, src io.Reader, size int64) (err error) {
	p, err := r.path(name)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create object %s in %s: %w", name, r, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create object %s in %s: %w", name, r, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return fmt.Errorf("create object %s in %s: %w", name, r, err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, src) // a local copy (copy_file_range from a cache file): ctx is checked before
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes, want %d", n, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create object %s in %s: %w", name, r, err)
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		return fmt.Errorf("create object %s in %s: %w", name, r, err)
	}
	return nil
}

func (r *fileRemote) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p, err := r.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err == nil {
		if fi, serr := f.Stat(); serr != nil || fi.IsDir() {
			f.Close()
			err = cmp.Or(serr, errPrefixOnly)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open object %s in %s: %w", name, r, err)
	}
	return f, nil
}

// errPrefixOnly is the error of a name that is no object, only the directory of others.
var errPrefixOnly = fmt.Errorf("no such object, only objects below it: %w", fs.ErrNotExist)

func (r *fileRemote) Size(ctx context.Context, name string) (int64, error) {
	p, err := r.path(name)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if err == nil && fi.IsDir() {
		err = errPrefixOnly
	}
	if err != nil {
		return 0, fmt.Errorf("size of object %s in %s: %w", name, r, err)
	}
	return fi.Size(), nil
}

func (r *fileRemote) List(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".upload-") {
			return nil
		}
		rel, err := filepath.Rel(r.dir, p)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list objects %q in %s: %w", prefix, r, err)
	}
	slices.Sort(out)
	return out, nil
}

func (r *fileRemote) Delete(ctx context.Context, name string) error {
	p, err := r.path(name)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return nil // no object, only the directory of others
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete object %s in %s: %w", name, r, err)
	}
	return nil
}

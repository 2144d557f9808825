package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/flowstate/flowstate/plugins/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
)

// s3Remote is a Remote in an S3 bucket below a key prefix (s3://bucket/prefix), through the
// S3 client fsstorage writes its checkpoints with (plugins/internal/fsys). The object name n
// is the key <prefix>/n. Create is a conditional PUT (If-None-Match: *; above s3.part-size a
// multipart upload completed with that condition), so an object appears whole and once, and
// of racing creates of one name exactly one wins. List walks the prefix with one delimited
// listing per directory. The store keeps no secret: its URI names only bucket and prefix.
type s3Remote struct {
	fs     *fsys.S3
	bucket string // the S3 name of the bucket's root, "/bucket"
	root   string // the S3 name of the store, "/bucket" or "/bucket/prefix"
}

// s3Retries is how many times the S3 client tries a request that got no answer (about a
// second of backoff in all, where the client's default of 10 waits several): a store that
// stays down must fail the call soon, so that goleveldb's own retries of a failed table
// write (backoff from 1 s to 8 s) and the restart strategy take over, and so that closing
// a keyed backend during an outage stays well within the runner's cancellation timeout.
const s3Retries = 3

// openS3Remote returns the Remote of an s3://bucket/prefix URI on the S3 client opts
// configure (fsys.S3OptionKeys, and for what they leave unset the AWS environment
// variables, as fsstorage reads them), once a HEAD of the bucket succeeds: a missing bucket
// or an endpoint that does not answer fails here rather than at the first table. The check
// gives up when ctx is done.
func openS3Remote(ctx context.Context, uri string, opts sdk.Options) (Remote, error) {
	if u, err := url.Parse(uri); err == nil && u.User != nil {
		return nil, fmt.Errorf("S3 URI %s: credentials do not belong in the URI (use the %s and %s options or AWS_ACCESS_KEY_ID): %w",
			u.Redacted(), OptionS3AccessKey, OptionS3SecretKey, fs.ErrInvalid)
	}
	root, err := fsys.S3Name(uri)
	if err != nil {
		return nil, err
	}
	cfg, err := fsys.S3ConfigFromOptions(opts, os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.MaxRetries = s3Retries
	client, err := fsys.NewS3(cfg)
	if err != nil {
		return nil, err
	}
	bucket, _, _ := strings.Cut(root[1:], "/")
	r := &s3Remote{fs: client, bucket: "/" + bucket, root: root}
	if err := r.checkBucket(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// errUnreachable marks the failure of a store that did not answer (as opposed to one that
// answered no): an outage the restart strategy may outlast, not a wrong option.
var errUnreachable = errors.New("the store did not answer")

// checkBucket stats the bucket, returning early (the request goes on in the background,
// bounded by the client's retries) when ctx is done. A bucket that is missing or refused
// is an error wrapping fs.ErrNotExist or fs.ErrPermission; a store that does not answer (or
// answers with a failure of its own) one wrapping errUnreachable.
func (r *s3Remote) checkBucket(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := r.fs.Stat(r.bucket)
		done <- err
	}()
	select {
	case err := <-done:
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrInvalid):
			return fmt.Errorf("bucket %s of %s (endpoint and credentials from the s3.* options or the AWS environment): %w", r.bucket[1:], r, err)
		}
		return fmt.Errorf("bucket %s of %s (endpoint and credentials from the s3.* options or the AWS environment): %w: %w", r.bucket[1:], r, errUnreachable, err)
	case <-ctx.Done():
		return fmt.Errorf("bucket %s of %s: %w: %w", r.bucket[1:], r, errUnreachable, ctx.Err())
	}
}

// String returns the store's URI, s3://bucket/prefix.
func (r *s3Remote) String() string { return fsys.S3URI(r.root) }

// name returns the S3 name of the object name (see checkName).
func (r *s3Remote) name(name string) (string, error) {
	if err := checkName(name, r); err != nil {
		return "", err
	}
	return r.root + "/" + name, nil
}

// Create implements Remote: the upload is published by Sync, which fails with an error
// wrapping fs.ErrExist when the name exists; otherwise Close aborts it, leaving nothing.
func (r *s3Remote) Create(ctx context.Context, name string, src io.Reader, size int64) (err error) {
	p, err := r.name(name)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("create object %s in %s: %w", name, r, err)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := r.fs.Create(p)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, ctxReader{ctx: ctx, r: src})
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader reads from r until ctx is done, so that a cancelled Create stops uploading.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Open implements Remote. The client's error for a missing object wraps fs.ErrNotExist.
func (r *s3Remote) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p, err := r.name(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open object %s in %s: %w", name, r, err)
	}
	rc, err := r.fs.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open object %s in %s: %w", name, r, err)
	}
	return rc, nil
}

// Size implements Remote. A name that only prefixes other objects is no object.
func (r *s3Remote) Size(ctx context.Context, name string) (int64, error) {
	p, err := r.name(name)
	if err != nil {
		return 0, err
	}
	info, err := r.stat(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("size of object %s in %s: %w", name, r, err)
	}
	return info.Size, nil
}

// stat describes the object of S3 name p, an error wrapping fs.ErrNotExist when there is
// none (a prefix of other objects being none).
func (r *s3Remote) stat(ctx context.Context, p string) (fsys.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return fsys.FileInfo{}, err
	}
	info, err := r.fs.Stat(p)
	if err == nil && !info.IsRegular {
		err = errPrefixOnly
	}
	return info, err
}

// Delete implements Remote. It looks before it deletes, so that a name that only prefixes
// other objects deletes nothing.
func (r *s3Remote) Delete(ctx context.Context, name string) error {
	p, err := r.name(name)
	if err != nil {
		return err
	}
	_, err = r.stat(ctx, p)
	if err == nil {
		err = r.fs.Remove(p)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete object %s in %s: %w", name, r, err)
	}
	return nil
}

// List implements Remote: it walks down from the deepest directory prefix names, into the
// directories whose objects may start with prefix.
func (r *s3Remote) List(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	dir, _ := path.Split(prefix)
	err := r.walk(ctx, strings.TrimSuffix(dir, "/"), prefix, &out)
	if errors.Is(err, fs.ErrNotExist) { // no object below dir, unless the bucket is gone
		_, err = r.fs.Stat(r.bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("list objects %q in %s: %w", prefix, r, err)
	}
	slices.Sort(out)
	return out, nil
}

// walk appends to out the names of the objects below directory dir of the store ("" for
// its root) that start with prefix. A directory below dir that is gone when walk lists it
// (its last object deleted meanwhile) holds nothing; dir itself missing is an error
// wrapping fs.ErrNotExist.
func (r *s3Remote) walk(ctx context.Context, dir, prefix string, out *[]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s3dir, rel := r.root, ""
	if dir != "" {
		s3dir, rel = r.root+"/"+dir, dir+"/"
	}
	entries, err := r.fs.List(s3dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := rel + e.Name
		switch {
		case !e.IsDir:
			if strings.HasPrefix(name, prefix) {
				*out = append(*out, name)
			}
		case strings.HasPrefix(name+"/", prefix) || strings.HasPrefix(prefix, name+"/"):
			if err := r.walk(ctx, name, prefix, out); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

package fsys

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is the FS of an S3-compatible object store. Its names are "/bucket/key" (see
// S3Name); one S3 reaches every bucket its credentials allow. It is safe for concurrent
// use.
//
// Objects map to files and key prefixes to directories:
//   - Create streams the object with a multipart upload and publishes it at Sync, atomically
//     and with If-None-Match: * (an existing object makes Sync fail with fs.ErrExist; Create
//     itself does not look). Nothing is visible before Sync; Close without Sync aborts.
//   - RenameNoReplace copies the object to its new key with a conditional put (exactly one
//     of racing renames to the same key wins; the others get fs.ErrExist), then deletes the
//     old key. The new object appears whole or not at all.
//   - Mkdir and MkdirAll write an empty marker object "key/" so that an empty directory
//     exists. Mkdir fails with fs.ErrExist when anything is below the prefix, and writes
//     the marker with a conditional put: exactly one of racing Mkdirs succeeds where the
//     server honours If-None-Match on keys ending in "/" (AWS; SeaweedFS does not).
//   - A directory exists while its marker or any object below it does; Remove deletes an
//     empty one; RemoveAll deletes every object below the prefix with multi-object deletes.
//   - SyncDir does nothing: a completed put is durable.
//
// Buckets are not created; a missing bucket is an error wrapping fs.ErrNotExist.
type S3 struct {
	core     minio.Core
	partSize int
}

var _ FS = (*S3)(nil)

// NewS3 returns the S3 file system cfg describes. It makes no request.
func NewS3(cfg S3Config) (*S3, error) {
	var creds *credentials.Credentials
	if cfg.AccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{&credentials.FileAWSCredentials{}})
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle != nil {
		lookup = minio.BucketLookupDNS
		if *cfg.PathStyle {
			lookup = minio.BucketLookupPath
		}
	}
	transport, err := s3Transport(cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("s3 client for endpoint %q: %w", cfg.Endpoint, err)
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        creds,
		Secure:       cfg.Secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    transport,
		MaxRetries:   cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client for endpoint %q: %w", cfg.Endpoint, err)
	}
	partSize := cfg.PartSize
	if partSize == 0 {
		partSize = DefaultS3PartSize
	}
	if partSize < MinS3PartSize || partSize > MaxS3PartSize {
		return nil, fmt.Errorf("s3 part size %d bytes out of range [5 MiB, 5 GiB]: %w", partSize, fs.ErrInvalid)
	}
	return &S3{core: minio.Core{Client: client}, partSize: int(partSize)}, nil
}

// s3Transport is minio's default transport, except that with TLS it leaves the root
// certificates to crypto/x509, which loads the system's (including SSL_CERT_FILE and
// SSL_CERT_DIR) once per process at the first handshake. minio's own parses the whole
// SSL_CERT_FILE bundle on every client it makes when that variable is set: 12 ms of every
// Configure, for a storage that may never talk to S3.
func s3Transport(secure bool) (*http.Transport, error) {
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		return nil, err
	}
	if secure {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return tr, nil
}

// Create implements FS. See S3 for when the object appears and how an existing one is
// detected.
func (s *S3) Create(name string) (File, error) {
	bucket, key, err := splitName(name)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, s3Errorf("create", bucket, key, fs.ErrInvalid, "a bucket's root is a directory, not a file")
	}
	return &s3File{fs: s, bucket: bucket, key: key}, nil
}

// putNoReplace writes data as bucket/key in one PUT, failing with fs.ErrExist when the key
// exists.
func (s *S3) putNoReplace(bucket, key string, data []byte) error {
	var opts minio.PutObjectOptions
	opts.SetMatchETagExcept("*")
	return retryConflict(func() error {
		_, err := s.core.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), "", "", opts)
		if err != nil {
			return s3Err("put (If-None-Match: *)", bucket, key, err)
		}
		return nil
	})
}

// Open implements FS: the object's bytes as a stream.
func (s *S3) Open(name string) (io.ReadCloser, error) {
	bucket, key, err := splitName(name)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, s3Errorf("get", bucket, key, fs.ErrInvalid, "a bucket's root is a directory, not a file")
	}
	body, _, _, err := s.core.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s3Err("get", bucket, key, err)
	}
	return &s3Reader{body: body, bucket: bucket, key: key}, nil
}

// s3Reader is an object's body; read errors name the object.
type s3Reader struct {
	body        io.ReadCloser
	bucket, key string
}

// Read implements io.Reader.
func (r *s3Reader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = s3Err("read", r.bucket, r.key, err)
	}
	return n, err
}

// Close implements io.Closer.
func (r *s3Reader) Close() error { return r.body.Close() }

// Stat implements FS. An object is a regular file; a key prefix with a marker or objects
// below it is a directory; a bucket's root is a directory when the bucket exists.
func (s *S3) Stat(name string) (FileInfo, error) {
	bucket, key, err := splitName(name)
	if err != nil {
		return FileInfo{}, err
	}
	ctx := context.Background()
	if key == "" {
		ok, err := s.core.BucketExists(ctx, bucket)
		if err != nil {
			return FileInfo{}, s3Err("head bucket", bucket, key, err)
		}
		if !ok {
			return FileInfo{}, s3Errorf("head bucket", bucket, key, fs.ErrNotExist, "no such bucket")
		}
		return FileInfo{IsDir: true}, nil
	}
	info, err := s.core.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return FileInfo{Size: info.Size, ModTime: info.LastModified, IsRegular: true}, nil
	}
	if !errors.Is(s3Kind(err), fs.ErrNotExist) {
		return FileInfo{}, s3Err("head", bucket, key, err)
	}
	below, err := s.objectsBelow(bucket, key, 1)
	if err != nil {
		return FileInfo{}, err
	}
	if len(below) == 0 {
		return FileInfo{}, s3Errorf("stat", bucket, key, fs.ErrNotExist, "no such object or prefix")
	}
	return FileInfo{IsDir: true}, nil
}

// objectsBelow returns up to limit keys of the objects below directory key (its marker
// included). It lists without a delimiter, so only real objects count: some servers
// (SeaweedFS) keep reporting a common prefix for a while after its last object is gone.
func (s *S3) objectsBelow(bucket, key string, limit int) ([]string, error) {
	res, err := s.core.ListObjectsV2(bucket, dirPrefix(key), "", "", "", limit)
	if err != nil {
		return nil, s3Err("list", bucket, dirPrefix(key), err)
	}
	keys := make([]string, 0, len(res.Contents))
	for _, o := range res.Contents {
		keys = append(keys, o.Key)
	}
	return keys, nil
}

// RenameNoReplace implements FS by a conditional copy then a delete of oldname. A failure
// to delete oldname after the copy is not reported (the rename has happened), as with
// Local.
func (s *S3) RenameNoReplace(oldname, newname string) error {
	ob, ok, err := splitName(oldname)
	if err != nil {
		return err
	}
	if _, _, err := splitName(newname); err != nil {
		return err
	}
	src, err := s.Open(oldname)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := s.Create(newname)
	if err != nil {
		return err
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	if err := dst.Sync(); err != nil {
		return err
	}
	_ = s.core.RemoveObject(context.Background(), ob, ok, minio.RemoveObjectOptions{})
	return nil
}

// Remove implements FS: it deletes an object, or a directory's marker when nothing is
// below it.
func (s *S3) Remove(name string) error {
	bucket, key, err := splitName(name)
	if err != nil {
		return err
	}
	if key == "" {
		return s3Errorf("remove", bucket, key, fs.ErrInvalid, "refusing to remove a bucket")
	}
	info, err := s.Stat(name)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if info.IsDir {
		below, err := s.objectsBelow(bucket, key, 2)
		if err != nil {
			return err
		}
		for _, k := range below {
			if k != dirPrefix(key) {
				return s3Errorf("remove", bucket, key, errNotEmpty, "directory not empty")
			}
		}
		key = dirPrefix(key)
	}
	if err := s.core.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s3Err("delete", bucket, key, err)
	}
	return nil
}

// RemoveAll implements FS: it deletes the object name and every object below the prefix
// name/, a thousand per request. A bucket's root is refused.
func (s *S3) RemoveAll(name string) error {
	bucket, key, err := splitName(name)
	if err != nil {
		return err
	}
	if key == "" {
		return s3Errorf("remove all", bucket, key, fs.ErrInvalid, "refusing to empty a whole bucket")
	}
	ctx := context.Background()
	if err := s.core.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil && !errors.Is(s3Kind(err), fs.ErrNotExist) {
		return s3Err("delete", bucket, key, err)
	}
	prefix := dirPrefix(key)
	token := ""
	for {
		res, err := s.core.ListObjectsV2(bucket, prefix, "", token, "", 1000)
		if err != nil {
			return s3Err("list", bucket, prefix, err)
		}
		if err := s.deleteObjects(ctx, bucket, res.Contents); err != nil {
			return err
		}
		if !res.IsTruncated || res.NextContinuationToken == "" {
			return nil
		}
		token = res.NextContinuationToken
	}
}

// deleteObjects deletes objects from bucket with one multi-object delete request.
func (s *S3) deleteObjects(ctx context.Context, bucket string, objects []minio.ObjectInfo) error {
	if len(objects) == 0 {
		return nil
	}
	// Deepest keys first, each directory's marker after its contents: servers that keep
	// directories (SeaweedFS) then find each one empty when its last entry goes.
	keys := make([]string, len(objects))
	for i, o := range objects {
		keys[i] = o.Key
	}
	sort.Slice(keys, func(i, j int) bool {
		di, dj := strings.Count(keys[i], "/"), strings.Count(keys[j], "/")
		if di != dj {
			return di > dj
		}
		return keys[i] > keys[j]
	})
	ch := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		ch <- minio.ObjectInfo{Key: k}
	}
	close(ch)
	var errs []error
	for e := range s.core.RemoveObjects(ctx, bucket, ch, minio.RemoveObjectsOptions{}) {
		if e.Err != nil && !errors.Is(s3Kind(e.Err), fs.ErrNotExist) {
			errs = append(errs, s3Err("delete", bucket, e.ObjectName, e.Err))
		}
	}
	return errors.Join(errs...)
}

// List implements FS: the objects (files) and common prefixes (directories) directly
// below dir, sorted by name. A directory with neither, nor a marker, does not exist.
func (s *S3) List(dir string) ([]DirEntry, error) {
	bucket, key, err := splitName(dir)
	if err != nil {
		return nil, err
	}
	prefix := dirPrefix(key)
	var out []DirEntry
	exists := false
	token := ""
	for {
		res, err := s.core.ListObjectsV2(bucket, prefix, "", token, "/", 1000)
		if err != nil {
			return nil, s3Err("list", bucket, prefix, err)
		}
		for _, o := range res.Contents {
			exists = true
			if name := strings.TrimPrefix(o.Key, prefix); name != "" {
				out = append(out, DirEntry{Name: name})
			}
		}
		for _, p := range res.CommonPrefixes {
			exists = true
			out = append(out, DirEntry{Name: strings.TrimSuffix(strings.TrimPrefix(p.Prefix, prefix), "/"), IsDir: true})
		}
		if !res.IsTruncated || res.NextContinuationToken == "" {
			break
		}
		token = res.NextContinuationToken
	}
	if !exists && key != "" {
		return nil, s3Errorf("list", bucket, prefix, fs.ErrNotExist, "no such directory: no object has this prefix")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Mkdir implements FS: it creates the directory's marker with a conditional put, failing
// with fs.ErrExist when the marker or any object below the prefix exists.
func (s *S3) Mkdir(name string) error {
	bucket, key, err := splitName(name)
	if err != nil {
		return err
	}
	if key == "" {
		return s3Errorf("mkdir", bucket, key, fs.ErrExist, "a bucket's root always exists")
	}
	below, err := s.objectsBelow(bucket, key, 1)
	if err != nil {
		return err
	}
	if len(below) > 0 {
		return s3Errorf("mkdir", bucket, key, fs.ErrExist, "directory exists")
	}
	return s.putNoReplace(bucket, dirPrefix(key), nil)
}

// MkdirAll implements FS: it writes the directory's marker (parents are implied by it).
func (s *S3) MkdirAll(name string) error {
	bucket, key, err := splitName(name)
	if err != nil {
		return err
	}
	if key == "" {
		return nil
	}
	_, err = s.core.PutObject(context.Background(), bucket, dirPrefix(key), bytes.NewReader(nil), 0, "", "", minio.PutObjectOptions{})
	if err != nil {
		return s3Err("put directory marker", bucket, dirPrefix(key), err)
	}
	return nil
}

// SyncDir implements FS. A completed S3 write is already durable, so it only checks name.
func (s *S3) SyncDir(name string) error {
	_, _, err := splitName(name)
	return err
}

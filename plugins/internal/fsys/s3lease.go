package fsys

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/minio/minio-go/v7"

	"github.com/flowstate/flowstate/sdk"
)

// s3Lease is a lease record kept as one S3 object. Its version is the object's ETag; the
// runner never writes the same bytes twice, so a content hash identifies a version.
type s3Lease struct {
	s           *S3
	bucket, key string
}

// ReadLease implements sdk.LeaseStore with a GET.
func (l *s3Lease) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	body, info, _, err := l.s.core.GetObject(ctx, l.bucket, l.key, minio.GetObjectOptions{})
	if err != nil {
		return sdk.LeaseRecord{}, l.err("get", err)
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, sdk.MaxLeaseSize+1))
	if err != nil {
		return sdk.LeaseRecord{}, l.err("read", err)
	}
	if len(data) > sdk.MaxLeaseSize {
		return sdk.LeaseRecord{}, s3Errorf("get", l.bucket, l.key, sdk.ErrCorrupt, "lease record larger than %d bytes", sdk.MaxLeaseSize)
	}
	if info.ETag == "" {
		return sdk.LeaseRecord{}, s3Errorf("get", l.bucket, l.key, sdk.ErrUnsupported, "the server sent no ETag: it cannot keep a lease")
	}
	return sdk.LeaseRecord{Data: data, Version: info.ETag}, nil
}

// WriteLease implements sdk.LeaseStore with a conditional PUT: If-None-Match: * to create,
// If-Match: <ETag> to replace. A failed precondition is sdk.ErrConflict; a concurrent
// conditional write the server aborted (AWS's 409) is retried.
func (l *s3Lease) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	if len(data) > sdk.MaxLeaseSize {
		return "", s3Errorf("put", l.bucket, l.key, sdk.ErrInvalidArgument, "lease record of %d bytes exceeds %d", len(data), sdk.MaxLeaseSize)
	}
	var opts minio.PutObjectOptions
	op := "put (If-None-Match: *)"
	if ifVersion == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(ifVersion)
		op = "put (If-Match: " + ifVersion + ")"
	}
	var version string
	err := retryConflict(func() error {
		info, err := l.s.core.PutObject(ctx, l.bucket, l.key, bytes.NewReader(data), int64(len(data)), "", "", opts)
		if err != nil {
			return err
		}
		version = info.ETag
		return nil
	})
	if err != nil {
		return "", l.err(op, err)
	}
	if version == "" {
		return "", s3Errorf(op, l.bucket, l.key, sdk.ErrUnsupported, "the server answered without an ETag: it cannot keep a lease")
	}
	return version, nil
}

// err classifies a failed request: a missing object is sdk.ErrNotFound, a failed
// precondition (and a missing object under If-Match) sdk.ErrConflict. A missing bucket
// stays what it is.
func (l *s3Lease) err(op string, err error) error {
	var resp minio.ErrorResponse
	kind := s3Kind(err)
	switch {
	case errors.As(err, &resp) && resp.Code == "NoSuchBucket":
	case errors.Is(kind, fs.ErrExist):
		kind = sdk.ErrConflict
	case errors.Is(kind, fs.ErrNotExist) && op == "get":
		kind = sdk.ErrNotFound
	case errors.Is(kind, fs.ErrNotExist):
		kind = sdk.ErrConflict
	}
	return &s3Error{op: op, uri: objectURI(l.bucket, l.key), kind: kind, cause: err}
}

package fsys

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/flowstate/flowstate/sdk"
)

var (
	_ LeaseFS = (*S3)(nil)
	_ LeaseFS = Mux{}
)

// LeaseStore implements LeaseFS: the record is the object name, created with
// If-None-Match: * and replaced with If-Match on the ETag it was read at.
func (s *S3) LeaseStore(name string) (sdk.LeaseStore, error) {
	bucket, key, err := splitName(name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, s3Errorf("lease", bucket, key, fs.ErrInvalid, "a lease record needs an object key")
	}
	return &s3Lease{s: s, bucket: bucket, key: key}, nil
}

// LeaseStore implements LeaseFS by routing name; the file system it routes to must
// implement LeaseFS.
func (m Mux) LeaseStore(name string) (sdk.LeaseStore, error) {
	f, n, err := m.route(name)
	if err != nil {
		return nil, err
	}
	l, ok := f.(LeaseFS)
	if !ok {
		return nil, fmt.Errorf("lease record %s: the file system %T cannot keep one: %w", name, f, sdk.ErrUnsupported)
	}
	return l.LeaseStore(n)
}

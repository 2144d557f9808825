package fsstorage

import (
	"context"
	"path/filepath"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

var _ sdk.LeaseStore = (*access)(nil)

// ReadLease implements sdk.LeaseStore: the record is <dir>/<job>/_lease, a file kept by
// sdk/filelease on a local file system, an object on S3.
func (a *access) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	l, err := a.leaseStore()
	if err != nil {
		return sdk.LeaseRecord{}, err
	}
	r, err := l.ReadLease(ctx)
	if err != nil {
		return sdk.LeaseRecord{}, wrapf(err, "lease of job %q", a.jobID)
	}
	return r, nil
}

// WriteLease implements sdk.LeaseStore: on a local file system a link(2) creates the
// record and a rename(2) under flock(2) replaces it (see sdk/filelease); on S3 a PUT with
// If-None-Match: * creates it and a PUT with If-Match on its ETag replaces it.
func (a *access) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	l, err := a.leaseStore()
	if err != nil {
		return "", err
	}
	v, err := l.WriteLease(ctx, data, ifVersion)
	if err != nil {
		return "", wrapf(err, "lease of job %q", a.jobID)
	}
	return v, nil
}

// leaseStore returns the store of the job's lease record.
func (a *access) leaseStore() (sdk.LeaseStore, error) {
	name := filepath.Join(a.jobDir, layout.LeaseFile)
	lfs, ok := a.fs.(fsys.LeaseFS)
	if !ok {
		return nil, errorf(sdk.ErrUnsupported, nil, "lease of job %q: the file system %T cannot keep one", a.jobID, a.fs)
	}
	l, err := lfs.LeaseStore(name)
	if err != nil {
		return nil, wrapf(err, "lease of job %q", a.jobID)
	}
	return l, nil
}

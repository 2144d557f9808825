package jmstorage

import (
	"context"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
	"github.com/flowstate/flowstate/sdk/layout"
)

// diskAccess is the access of a storage with a dir: it also keeps the job's lease record
// in <dir>/<job>/_lease (sdk/filelease). Without a dir there is no access that outlives
// the process to keep one, and the runner falls back to a lease on its own machine.
type diskAccess struct {
	*access
	lease *filelease.Store
}

var _ sdk.LeaseStore = (*diskAccess)(nil)

// newAccess returns the access of job: a *diskAccess when the storage has a dir.
func newAccess(s *Storage, jobID string) sdk.CheckpointStorageAccess {
	a := &access{st: s, jobID: jobID}
	if s.cfg.dir == "" {
		return a
	}
	return &diskAccess{access: a, lease: filelease.New(filepath.Join(s.cfg.dir, jobID, layout.LeaseFile))}
}

// ReadLease implements sdk.LeaseStore.
func (a *diskAccess) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	r, err := a.lease.ReadLease(ctx)
	if err != nil {
		return sdk.LeaseRecord{}, wrapf(err, "lease of job %q", a.jobID)
	}
	return r, nil
}

// WriteLease implements sdk.LeaseStore: link(2) creates the record, a rename(2) under
// flock(2) replaces it (see sdk/filelease).
func (a *diskAccess) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	v, err := a.lease.WriteLease(ctx, data, ifVersion)
	if err != nil {
		return "", wrapf(err, "lease of job %q", a.jobID)
	}
	return v, nil
}

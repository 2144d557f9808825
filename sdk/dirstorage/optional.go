package dirstorage

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
	"github.com/flowstate/flowstate/sdk/optional"
)

// newAccess returns the access of job jobID. It implements sdk.SharedStateLister and
// sdk.RemoteFileAdopter always, sdk.LeaseStore exactly when the FS implements LeaseFS, and
// sdk.LocalStateLocator exactly when it implements LocalPather, since the runner discovers
// them with type assertions.
func (s *Storage) newAccess(jobID string) sdk.CheckpointStorageAccess {
	a := &access{s: s, jobID: jobID, jobDir: filepath.Join(s.cfg.Dir, jobID)}
	with := optional.AccessInterfaces{Lister: a, Adopter: a}
	if _, ok := s.fs.(LeaseFS); ok {
		with.Lease = a
	}
	if _, ok := s.fs.(LocalPather); ok {
		with.Locator = a
	}
	return optional.Access(a, with)
}

var (
	_ sdk.LeaseStore        = (*access)(nil)
	_ sdk.LocalStateLocator = (*access)(nil)
)

// ReadLease implements sdk.LeaseStore: it reads the record <dir>/<job>/_lease through the
// FS's LeaseStore.
func (a *access) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	l, err := a.leaseStore()
	if err != nil {
		return sdk.LeaseRecord{}, err
	}
	r, err := l.ReadLease(ctx)
	if err != nil {
		return sdk.LeaseRecord{}, a.s.errs.Wrap(err, "lease of job %q", a.jobID)
	}
	return r, nil
}

// WriteLease implements sdk.LeaseStore: it writes the record <dir>/<job>/_lease through
// the FS's LeaseStore.
func (a *access) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	l, err := a.leaseStore()
	if err != nil {
		return "", err
	}
	v, err := l.WriteLease(ctx, data, ifVersion)
	if err != nil {
		return "", a.s.errs.Wrap(err, "lease of job %q", a.jobID)
	}
	return v, nil
}

// leaseStore returns the store of the job's lease record; an FS that keeps none gets an
// error wrapping sdk.ErrUnsupported.
func (a *access) leaseStore() (sdk.LeaseStore, error) {
	fs, ok := a.s.fs.(LeaseFS)
	if !ok {
		return nil, fmt.Errorf("lease of job %q: the file system keeps no lease records: %w", a.jobID, sdk.ErrUnsupported)
	}
	l, err := fs.LeaseStore(filepath.Join(a.jobDir, layout.LeaseFile))
	if err != nil {
		return nil, a.s.errs.Wrap(err, "lease of job %q", a.jobID)
	}
	return l, nil
}

// LocalStatePath implements sdk.LocalStateLocator: the local file of a handle's ref, ""
// for inline handles and files that are not local.
func (a *access) LocalStatePath(_ context.Context, h sdk.StreamStateHandle) (string, error) {
	l, ok := a.s.fs.(LocalPather)
	if !ok || h.Ref == "" {
		return "", nil
	}
	p, err := a.s.name(h.Ref)
	if err != nil {
		return "", a.s.errs.Wrap(err, "state handle %q", h.Ref)
	}
	return l.LocalPath(p), nil
}

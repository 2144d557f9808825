package dirstorage

import (
	"context"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// The access types: an access implements sdk.LeaseStore exactly when the FS implements
// LeaseFS, and sdk.LocalStateLocator exactly when it implements LocalPather, since the
// runner discovers both with type assertions.
type (
	leaseAccess      struct{ *access }
	localAccess      struct{ *access }
	leaseLocalAccess struct{ *access }
)

var (
	_ sdk.LeaseStore        = leaseAccess{}
	_ sdk.LocalStateLocator = localAccess{}
	_ sdk.LeaseStore        = leaseLocalAccess{}
	_ sdk.LocalStateLocator = leaseLocalAccess{}
)

// newAccess returns the access of job jobID with the optional interfaces the FS allows.
func (s *Storage) newAccess(jobID string) sdk.CheckpointStorageAccess {
	a := &access{s: s, jobID: jobID, jobDir: filepath.Join(s.cfg.Dir, jobID)}
	_, lease := s.fs.(LeaseFS)
	_, local := s.fs.(LocalPather)
	switch {
	case lease && local:
		return leaseLocalAccess{a}
	case lease:
		return leaseAccess{a}
	case local:
		return localAccess{a}
	}
	return a
}

// ReadLease implements sdk.LeaseStore.
func (a leaseAccess) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) { return a.readLease(ctx) }

// WriteLease implements sdk.LeaseStore.
func (a leaseAccess) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	return a.writeLease(ctx, data, ifVersion)
}

// ReadLease implements sdk.LeaseStore.
func (a leaseLocalAccess) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	return a.readLease(ctx)
}

// WriteLease implements sdk.LeaseStore.
func (a leaseLocalAccess) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	return a.writeLease(ctx, data, ifVersion)
}

// LocalStatePath implements sdk.LocalStateLocator.
func (a localAccess) LocalStatePath(ctx context.Context, h sdk.StreamStateHandle) (string, error) {
	return a.localStatePath(h)
}

// LocalStatePath implements sdk.LocalStateLocator.
func (a leaseLocalAccess) LocalStatePath(ctx context.Context, h sdk.StreamStateHandle) (string, error) {
	return a.localStatePath(h)
}

// readLease reads the record <dir>/<job>/_lease through the FS's LeaseStore.
func (a *access) readLease(ctx context.Context) (sdk.LeaseRecord, error) {
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

// writeLease writes the record <dir>/<job>/_lease through the FS's LeaseStore.
func (a *access) writeLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
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

// leaseStore returns the store of the job's lease record.
func (a *access) leaseStore() (sdk.LeaseStore, error) {
	l, err := a.s.fs.(LeaseFS).LeaseStore(filepath.Join(a.jobDir, layout.LeaseFile))
	if err != nil {
		return nil, a.s.errs.Wrap(err, "lease of job %q", a.jobID)
	}
	return l, nil
}

// localStatePath returns the local file of a handle's ref, "" for inline handles and
// files that are not local.
func (a *access) localStatePath(h sdk.StreamStateHandle) (string, error) {
	if h.Ref == "" {
		return "", nil
	}
	p, err := a.s.name(h.Ref)
	if err != nil {
		return "", a.s.errs.Wrap(err, "state handle %q", h.Ref)
	}
	return a.s.fs.(LocalPather).LocalPath(p), nil
}

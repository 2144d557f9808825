package jmstorage

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// access is one job's view of the storage.
type access struct {
	st    *Storage
	jobID string
	// disk is the job's access of the directory storage, nil without a dir.
	disk sdk.CheckpointStorageAccess
}

var _ sdk.CheckpointStorageAccess = (*access)(nil)

// diskAccess is the access of a storage with a dir: it also keeps the job's lease record
// in <dir>/<job>/_lease. Without a dir there is no access that outlives the process to
// keep one, and the runner falls back to a lease on its own machine.
type diskAccess struct {
	*access
	sdk.LeaseStore
}

// newAccess returns the access of job: a *diskAccess when the storage has a dir.
func newAccess(ctx context.Context, s *Storage, jobID string) (sdk.CheckpointStorageAccess, error) {
	a := &access{st: s, jobID: jobID}
	if s.cfg.dir == "" {
		return a, nil
	}
	disk, err := s.disk.CreateCheckpointStorage(ctx, jobID)
	if err != nil {
		return nil, err
	}
	a.disk = disk
	return &diskAccess{access: a, LeaseStore: disk.(sdk.LeaseStore)}, nil
}

// SupportsHighlyAvailableStorage implements sdk.CheckpointStorageAccess: true only with a
// dir, where completed checkpoints outlive the process.
func (a *access) SupportsHighlyAvailableStorage() bool { return a.disk != nil }

// HasDefaultSavepointLocation implements sdk.CheckpointStorageAccess.
func (a *access) HasDefaultSavepointLocation() bool { return a.st.cfg.savepointDir != "" }

// InitializeBaseLocationsForCheckpoint implements sdk.CheckpointStorageAccess: it drops the
// state of the job's checkpoints that never completed and, with a dir, removes their
// directories.
func (a *access) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
	a.st.abandonPending(a.jobID)
	if a.disk == nil {
		return nil
	}
	return a.disk.InitializeBaseLocationsForCheckpoint(ctx)
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess. It fails when
// checkpoint N of the job is already complete.
func (a *access) InitializeLocationForCheckpoint(ctx context.Context, checkpointID int64) (sdk.CheckpointStorageLocation, error) {
	if checkpointID < 0 {
		return nil, errs.New(sdk.ErrInvalidArgument, "negative checkpoint id %d for job %q", checkpointID, a.jobID)
	}
	name := layout.CheckpointDir(checkpointID)
	var disk sdk.CheckpointStorageLocation
	if a.disk != nil {
		var err error
		if disk, err = a.disk.InitializeLocationForCheckpoint(ctx, checkpointID); err != nil {
			return nil, err
		}
	}
	l := &location{job: a.jobID, name: name, disk: disk}
	if _, exists := a.st.completedAt(l.pointer()); exists {
		return nil, errs.New(fs.ErrExist, "checkpoint %d of job %q is already complete (%q)", checkpointID, a.jobID, l.pointer())
	}
	return newLocation(a.st, a.jobID, checkpointID, name, disk, false), nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess: savepoints are
// written to <target or savepoint-dir>/savepoint-<6 chars of job id>-<12 random hex>/.
func (a *access) InitializeLocationForSavepoint(ctx context.Context, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	disk, err := a.st.disk.InitializeLocationForSavepoint(ctx, a.jobID, checkpointID, target)
	if err != nil {
		return nil, err
	}
	return newLocation(a.st, a.jobID, checkpointID, filepath.Base(disk.LocationReference()), disk, true), nil
}

// ListCompletedCheckpoints implements sdk.CheckpointStorageAccess: with a dir the chk-N
// files on disk, else the checkpoints held in memory; oldest first, no savepoints.
func (a *access) ListCompletedCheckpoints(ctx context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	if a.disk == nil {
		cps := a.st.checkpointsInMemory(a.jobID)
		out := make([]sdk.CompletedCheckpointStorageLocation, len(cps))
		for i, c := range cps {
			out[i] = c.completedLocation()
		}
		return out, nil
	}
	onDisk, err := a.disk.ListCompletedCheckpoints(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sdk.CompletedCheckpointStorageLocation, len(onDisk))
	for i, done := range onDisk {
		c, err := a.st.held(ctx, done)
		if err != nil {
			return nil, err
		}
		out[i] = c.completedLocation()
	}
	return out, nil
}

// OpenState implements sdk.CheckpointStorageAccess.
func (a *access) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	if _, ok := parseRef(h.Ref); !ok {
		return nil, errs.New(sdk.ErrInvalidArgument, "state handle %q is not a jmstorage handle (want jm:<job>/<location>/<id>)", h.Ref)
	}
	if b, ok := a.st.blob(h.Ref); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	if err := a.st.lazyLoad(ctx, h.Ref); err != nil {
		return nil, errs.WrapAs(sdk.ErrNotFound, err, "state handle %q", h.Ref)
	}
	if b, ok := a.st.blob(h.Ref); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return nil, errs.New(sdk.ErrNotFound, "state handle %q: no such state in this jmstorage process", h.Ref)
}

// DiscardState implements sdk.CheckpointStorageAccess: it frees the blobs of the handles.
// Unknown ones are fine; handles of another storage are refused.
func (a *access) DiscardState(_ context.Context, handles []sdk.StreamStateHandle) error {
	refs := make([]string, 0, len(handles))
	for _, h := range handles {
		if h.Ref == "" {
			continue
		}
		if _, ok := parseRef(h.Ref); !ok {
			return errs.New(sdk.ErrInvalidArgument, "refusing to discard state %q: not a jmstorage handle", h.Ref)
		}
		refs = append(refs, h.Ref)
	}
	a.st.discard(refs)
	return nil
}

// DisposeCheckpoint implements sdk.CheckpointStorageAccess: it removes the checkpoint's file
// (metadata first) when it has one, then frees its state. A missing one is fine.
func (a *access) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	pointer := loc.ExternalPointer
	if strings.HasPrefix(pointer, refScheme) {
		a.st.forget(pointer)
		return nil
	}
	if err := a.st.disk.DisposeCheckpoint(ctx, loc); err != nil {
		return err
	}
	dir, _ := layout.LocalPath(pointer) // DisposeCheckpoint checked it
	if filepath.Base(dir) == layout.MetadataFile {
		dir = filepath.Dir(dir)
	}
	a.st.forget(dir)
	return nil
}

// Close implements sdk.CheckpointStorageAccess. Completed checkpoints stay in the storage:
// a restarted job finds them with a new access.
func (a *access) Close() error { return nil }

package jmstorage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// access is one job's view of the storage.
type access struct {
	st    *Storage
	jobID string
}

var _ sdk.CheckpointStorageAccess = (*access)(nil)

// SupportsHighlyAvailableStorage implements sdk.CheckpointStorageAccess: true only with a
// dir, where completed checkpoints outlive the process.
func (a *access) SupportsHighlyAvailableStorage() bool { return a.st.cfg.dir != "" }

// HasDefaultSavepointLocation implements sdk.CheckpointStorageAccess.
func (a *access) HasDefaultSavepointLocation() bool { return a.st.cfg.savepointDir != "" }

// InitializeBaseLocationsForCheckpoint implements sdk.CheckpointStorageAccess: it drops the
// state of the job's checkpoints that never completed and, with a dir, removes their
// directories.
func (a *access) InitializeBaseLocationsForCheckpoint(_ context.Context) error {
	a.st.abandonPending(a.jobID)
	return a.st.cleanLeftovers(a.jobID)
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess. It fails when
// checkpoint N of the job is already complete.
func (a *access) InitializeLocationForCheckpoint(_ context.Context, checkpointID int64) (sdk.CheckpointStorageLocation, error) {
	if checkpointID < 0 {
		return nil, errorf(sdk.ErrInvalidArgument, "negative checkpoint id %d for job %q", checkpointID, a.jobID)
	}
	name := layout.CheckpointDir(checkpointID)
	diskDir := ""
	if a.st.cfg.dir != "" {
		diskDir = filepath.Join(a.st.cfg.dir, a.jobID, name)
		meta := filepath.Join(diskDir, layout.MetadataFile)
		if _, err := os.Stat(meta); err == nil {
			return nil, errorf(fs.ErrExist, "checkpoint %d of job %q is already complete: '%s' exists", checkpointID, a.jobID, meta)
		}
	}
	l := &location{job: a.jobID, name: name, diskDir: diskDir}
	if _, exists := a.st.completedAt(l.pointer()); exists {
		return nil, errorf(fs.ErrExist, "checkpoint %d of job %q is already complete (%q)", checkpointID, a.jobID, l.pointer())
	}
	return newLocation(a.st, a.jobID, checkpointID, name, diskDir, false), nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess: savepoints are
// written to <target or savepoint-dir>/savepoint-<6 chars of job id>-<12 random hex>/.
func (a *access) InitializeLocationForSavepoint(_ context.Context, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	base := a.st.cfg.savepointDir
	if strings.TrimSpace(target) != "" {
		p, err := layout.LocalPath(target)
		if err != nil {
			return nil, wrapf(err, "savepoint target %q", target)
		}
		base = p
	}
	if base == "" {
		return nil, errorf(sdk.ErrInvalidArgument, "No savepoint location given and no default location configured.")
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, wrapf(err, "create savepoint directory '%s'", base)
	}
	for attempt := 0; ; attempt++ {
		name, err := layout.SavepointDir(a.jobID)
		if err != nil {
			return nil, wrapf(err, "savepoint of job %q", a.jobID)
		}
		dir := filepath.Join(base, name)
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return newLocation(a.st, a.jobID, checkpointID, name, dir, true), nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return nil, wrapf(err, "create savepoint directory '%s'", dir)
		}
	}
}

// ListCompletedCheckpoints implements sdk.CheckpointStorageAccess: with a dir the chk-N
// files on disk, else the checkpoints held in memory; oldest first, no savepoints.
func (a *access) ListCompletedCheckpoints(_ context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	var cps []*checkpoint
	if a.st.cfg.dir != "" {
		var err error
		if cps, err = a.st.listOnDisk(a.jobID); err != nil {
			return nil, err
		}
	} else {
		cps = a.st.checkpointsInMemory(a.jobID)
	}
	out := make([]sdk.CompletedCheckpointStorageLocation, len(cps))
	for i, c := range cps {
		out[i] = c.completedLocation()
	}
	return out, nil
}

// OpenState implements sdk.CheckpointStorageAccess.
func (a *access) OpenState(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	if _, ok := parseRef(h.Ref); !ok {
		return nil, errorf(sdk.ErrInvalidArgument, "state handle %q is not a jmstorage handle (want jm:<job>/<location>/<id>)", h.Ref)
	}
	if b, ok := a.st.blob(h.Ref); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	if err := a.st.lazyLoad(h.Ref); err != nil {
		return nil, kindWrapf(sdk.ErrNotFound, err, "state handle %q", h.Ref)
	}
	if b, ok := a.st.blob(h.Ref); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return nil, errorf(sdk.ErrNotFound, "state handle %q: no such state in this jmstorage process", h.Ref)
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
			return errorf(sdk.ErrInvalidArgument, "refusing to discard state %q: not a jmstorage handle", h.Ref)
		}
		refs = append(refs, h.Ref)
	}
	a.st.discard(refs)
	return nil
}

// DisposeCheckpoint implements sdk.CheckpointStorageAccess: it removes the checkpoint's file
// (metadata first) when it has one, then frees its state. A missing one is fine.
func (a *access) DisposeCheckpoint(_ context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	pointer := loc.ExternalPointer
	if strings.HasPrefix(pointer, refScheme) {
		a.st.forget(pointer)
		return nil
	}
	dir, err := layout.LocalPath(pointer)
	if err != nil {
		return wrapf(err, "dispose checkpoint %q", pointer)
	}
	if filepath.Base(dir) == layout.MetadataFile {
		dir = filepath.Dir(dir)
	}
	if err := disposeOnDisk(dir, pointer); err != nil {
		return err
	}
	a.st.forget(dir)
	return nil
}

// Close implements sdk.CheckpointStorageAccess. Completed checkpoints stay in the storage:
// a restarted job finds them with a new access.
func (a *access) Close() error { return nil }

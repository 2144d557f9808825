package fsstorage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// access is one job's view of the storage.
type access struct {
	fs     fsys.FS
	cfg    config
	jobID  string
	jobDir string
}

var _ sdk.CheckpointStorageAccess = (*access)(nil)

// SupportsHighlyAvailableStorage implements sdk.CheckpointStorageAccess: files outlive the
// process.
func (a *access) SupportsHighlyAvailableStorage() bool { return true }

// HasDefaultSavepointLocation implements sdk.CheckpointStorageAccess.
func (a *access) HasDefaultSavepointLocation() bool { return a.cfg.savepointDir != "" }

// InitializeBaseLocationsForCheckpoint implements sdk.CheckpointStorageAccess: it creates
// shared/ and taskowned/, removes chk-N directories without _metadata (checkpoints that
// never completed) and temporary metadata files left in completed ones.
func (a *access) InitializeBaseLocationsForCheckpoint(_ context.Context) error {
	for _, d := range []string{layout.SharedDir, layout.TaskOwnedDir} {
		p := filepath.Join(a.jobDir, d)
		if err := a.fs.MkdirAll(p); err != nil {
			return wrapf(err, "create directory '%s'", p)
		}
	}
	entries, err := a.fs.List(a.jobDir)
	if err != nil {
		return wrapf(err, "list job directory '%s'", a.jobDir)
	}
	var errs []error
	for _, e := range entries {
		if _, ok := layout.ParseCheckpointDir(e.Name); !ok || !e.IsDir {
			continue
		}
		if err := a.cleanCheckpointDir(filepath.Join(a.jobDir, e.Name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cleanCheckpointDir removes dir when it has no _metadata, else the temporary metadata
// files in it.
func (a *access) cleanCheckpointDir(dir string) error {
	meta := filepath.Join(dir, layout.MetadataFile)
	_, err := a.fs.Stat(meta)
	if errors.Is(err, fs.ErrNotExist) {
		if err := a.fs.RemoveAll(dir); err != nil {
			return wrapf(err, "remove incomplete checkpoint directory '%s'", dir)
		}
		return nil
	}
	if err != nil {
		return wrapf(err, "stat '%s'", meta)
	}
	entries, err := a.fs.List(dir)
	if err != nil {
		return wrapf(err, "list checkpoint directory '%s'", dir)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, layout.MetadataTempPrefix) {
			p := filepath.Join(dir, e.Name)
			if err := a.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return wrapf(err, "remove temporary metadata file '%s'", p)
			}
		}
	}
	return nil
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess: it creates
// <dir>/<job>/chk-N (and shared/ if missing). It fails if checkpoint N already completed.
func (a *access) InitializeLocationForCheckpoint(_ context.Context, checkpointID int64) (sdk.CheckpointStorageLocation, error) {
	if checkpointID < 0 {
		return nil, errorf(sdk.ErrInvalidArgument, nil, "negative checkpoint id %d for job %q", checkpointID, a.jobID)
	}
	shared := filepath.Join(a.jobDir, layout.SharedDir)
	if err := a.fs.MkdirAll(shared); err != nil {
		return nil, wrapf(err, "create directory '%s'", shared)
	}
	dir := filepath.Join(a.jobDir, layout.CheckpointDir(checkpointID))
	if err := a.fs.MkdirAll(dir); err != nil {
		return nil, wrapf(err, "create checkpoint directory '%s'", dir)
	}
	meta := filepath.Join(dir, layout.MetadataFile)
	if _, err := a.fs.Stat(meta); err == nil {
		return nil, errorf(fs.ErrExist, nil, "checkpoint %d of job %q is already complete: '%s' exists", checkpointID, a.jobID, meta)
	}
	return &location{fs: a.fs, cfg: a.cfg, id: checkpointID, dir: dir, sharedDir: shared}, nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess: it creates
// <target or savepoint-dir>/savepoint-<6 chars of job id>-<12 random hex>/.
func (a *access) InitializeLocationForSavepoint(_ context.Context, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	base := a.cfg.savepointDir
	if strings.TrimSpace(target) != "" {
		p, err := localPath(target)
		if err != nil {
			return nil, wrapf(err, "savepoint target %q", target)
		}
		base = p
	}
	if base == "" {
		return nil, errorf(sdk.ErrInvalidArgument, nil, "No savepoint location given and no default location configured.")
	}
	if err := a.fs.MkdirAll(base); err != nil {
		return nil, wrapf(err, "create savepoint directory '%s'", base)
	}
	for attempt := 0; ; attempt++ {
		name, err := layout.SavepointDir(a.jobID)
		if err != nil {
			return nil, wrapf(err, "savepoint of job %q", a.jobID)
		}
		dir := filepath.Join(base, name)
		err = a.fs.Mkdir(dir)
		if err == nil {
			return &location{fs: a.fs, cfg: a.cfg, id: checkpointID, dir: dir, sharedDir: dir, savepoint: true}, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return nil, wrapf(err, "create savepoint directory '%s'", dir)
		}
	}
}

// ListCompletedCheckpoints implements sdk.CheckpointStorageAccess: the chk-N directories
// with _metadata, by increasing N.
func (a *access) ListCompletedCheckpoints(_ context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	entries, err := a.fs.List(a.jobDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapf(err, "list job directory '%s'", a.jobDir)
	}
	var out []sdk.CompletedCheckpointStorageLocation
	for _, e := range entries {
		if _, ok := layout.ParseCheckpointDir(e.Name); !ok || !e.IsDir {
			continue
		}
		loc, err := completedAt(a.fs, filepath.Join(a.jobDir, e.Name))
		if errors.Is(err, sdk.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, loc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CheckpointID < out[j].CheckpointID })
	return out, nil
}

// OpenState implements sdk.CheckpointStorageAccess. Inline handles read their own bytes;
// others open the file their ref names, wherever it is (a savepoint may live anywhere).
func (a *access) OpenState(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	p, err := localPath(h.Ref)
	if err != nil {
		return nil, wrapf(err, "state handle %q", h.Ref)
	}
	r, err := a.fs.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(sdk.ErrNotFound, err, "state handle %q: open '%s'", h.Ref, p)
	}
	if err != nil {
		return nil, wrapf(err, "state handle %q: open '%s'", h.Ref, p)
	}
	return r, nil
}

// DiscardState implements sdk.CheckpointStorageAccess. It deletes the files of the handles,
// refusing any outside the checkpoint and savepoint directories; missing files are fine.
func (a *access) DiscardState(_ context.Context, handles []sdk.StreamStateHandle) error {
	var errs []error
	for _, h := range handles {
		if h.Ref == "" {
			continue
		}
		if err := a.discardFile(h.Ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// discardFile deletes the state file ref names after checking where it is.
func (a *access) discardFile(ref string) error {
	p, err := localPath(ref)
	if err != nil {
		return wrapf(err, "discard state %q", ref)
	}
	inside := within(a.cfg.dir, p) && p != a.cfg.dir
	if a.cfg.savepointDir != "" && within(a.cfg.savepointDir, p) && p != a.cfg.savepointDir {
		inside = true
	}
	if !inside {
		return errorf(sdk.ErrInvalidArgument, nil, "refusing to discard state %q: '%s' is outside the checkpoint directory '%s'", ref, p, a.cfg.dir)
	}
	info, err := a.fs.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return wrapf(err, "discard state %q: stat '%s'", ref, p)
	}
	if !info.IsRegular {
		return errorf(sdk.ErrInvalidArgument, nil, "refusing to discard state %q: '%s' is not a regular file", ref, p)
	}
	if err := a.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "discard state %q: remove '%s'", ref, p)
	}
	return nil
}

// DisposeCheckpoint implements sdk.CheckpointStorageAccess: it removes the _metadata file
// first, so the checkpoint never resolves again, then the directory and its exclusive
// state. It only removes chk-N and savepoint-* directories; a missing one is fine.
func (a *access) DisposeCheckpoint(_ context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	dir, err := localPath(loc.ExternalPointer)
	if err != nil {
		return wrapf(err, "dispose checkpoint %q", loc.ExternalPointer)
	}
	if filepath.Base(dir) == layout.MetadataFile {
		dir = filepath.Dir(dir)
	}
	if !isLocationDirName(filepath.Base(dir)) {
		return errorf(sdk.ErrInvalidArgument, nil,
			"refusing to dispose checkpoint %q: '%s' is not a chk-N or savepoint directory", loc.ExternalPointer, dir)
	}
	meta := filepath.Join(dir, layout.MetadataFile)
	if err := a.fs.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "dispose checkpoint: remove metadata file '%s'", meta)
	}
	if err := a.fs.RemoveAll(dir); err != nil {
		return wrapf(err, "dispose checkpoint: remove directory '%s'", dir)
	}
	return nil
}

// Close implements sdk.CheckpointStorageAccess; there is nothing to release.
func (a *access) Close() error { return nil }

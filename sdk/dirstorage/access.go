package dirstorage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// access is one job's view of the storage.
type access struct {
	s      *Storage
	jobID  string
	jobDir string
}

var (
	_ sdk.CheckpointStorageAccess = (*access)(nil)
	_ sdk.SharedStateLister       = (*access)(nil)
)

// SupportsHighlyAvailableStorage implements sdk.CheckpointStorageAccess with
// Config.HighlyAvailable.
func (a *access) SupportsHighlyAvailableStorage() bool { return a.s.cfg.HighlyAvailable }

// HasDefaultSavepointLocation implements sdk.CheckpointStorageAccess.
func (a *access) HasDefaultSavepointLocation() bool { return a.s.cfg.SavepointDir != "" }

// InitializeBaseLocationsForCheckpoint implements sdk.CheckpointStorageAccess: it creates
// shared/ and taskowned/, removes chk-N directories without _metadata (checkpoints that
// never completed) and temporary metadata files left in completed ones. The lease record
// stays.
func (a *access) InitializeBaseLocationsForCheckpoint(_ context.Context) error {
	for _, d := range []string{layout.SharedDir, layout.TaskOwnedDir} {
		p := filepath.Join(a.jobDir, d)
		if err := a.s.fs.MkdirAll(p); err != nil {
			return a.s.errs.Wrap(err, "create directory '%s'", p)
		}
	}
	dirs, err := a.checkpointDirs()
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		if err := a.cleanCheckpointDir(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkpointDirs returns the job's chk-N directories, complete or not.
func (a *access) checkpointDirs() ([]string, error) {
	entries, err := a.s.fs.List(a.jobDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, a.s.errs.Wrap(err, "list job directory '%s'", a.jobDir)
	}
	var dirs []string
	for _, e := range entries {
		if _, ok := layout.ParseCheckpointDir(e.Name); ok && e.IsDir {
			dirs = append(dirs, filepath.Join(a.jobDir, e.Name))
		}
	}
	return dirs, nil
}

// cleanCheckpointDir removes dir when it has no _metadata, else the temporary metadata
// files in it.
func (a *access) cleanCheckpointDir(dir string) error {
	meta := filepath.Join(dir, layout.MetadataFile)
	_, err := a.s.fs.Stat(meta)
	if errors.Is(err, fs.ErrNotExist) {
		if err := a.s.fs.RemoveAll(dir); err != nil {
			return a.s.errs.Wrap(err, "remove incomplete checkpoint directory '%s'", dir)
		}
		return nil
	}
	if err != nil {
		return a.s.errs.Wrap(err, "stat '%s'", meta)
	}
	entries, err := a.s.fs.List(dir)
	if err != nil {
		return a.s.errs.Wrap(err, "list checkpoint directory '%s'", dir)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, layout.MetadataTempPrefix) {
			p := filepath.Join(dir, e.Name)
			if err := a.s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return a.s.errs.Wrap(err, "remove temporary metadata file '%s'", p)
			}
		}
	}
	return nil
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess: it creates
// <dir>/<job>/chk-N (and shared/ if missing). It fails with an error wrapping fs.ErrExist
// if checkpoint N already completed.
func (a *access) InitializeLocationForCheckpoint(_ context.Context, checkpointID int64) (sdk.CheckpointStorageLocation, error) {
	if checkpointID < 0 {
		return nil, a.s.errs.New(sdk.ErrInvalidArgument, "negative checkpoint id %d for job %q", checkpointID, a.jobID)
	}
	shared := filepath.Join(a.jobDir, layout.SharedDir)
	if err := a.s.fs.MkdirAll(shared); err != nil {
		return nil, a.s.errs.Wrap(err, "create directory '%s'", shared)
	}
	dir := filepath.Join(a.jobDir, layout.CheckpointDir(checkpointID))
	if err := a.s.fs.MkdirAll(dir); err != nil {
		return nil, a.s.errs.Wrap(err, "create checkpoint directory '%s'", dir)
	}
	meta := filepath.Join(dir, layout.MetadataFile)
	if _, err := a.s.fs.Stat(meta); err == nil {
		return nil, a.s.errs.New(fs.ErrExist, "checkpoint %d of job %q is already complete: '%s' exists", checkpointID, a.jobID, meta)
	}
	return a.s.newLocation(checkpointID, dir, shared), nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess (see
// Storage.InitializeLocationForSavepoint).
func (a *access) InitializeLocationForSavepoint(ctx context.Context, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	return a.s.InitializeLocationForSavepoint(ctx, a.jobID, checkpointID, target)
}

// InitializeLocationForSavepoint creates the location of a savepoint of job jobID:
// <target or savepoint-dir>/savepoint-<6 chars of job id>-<12 random hex>/. A savepoint
// keeps its shared streams inside it too, so that it is self-contained. The directory,
// given or configured, must be absolute and may not lie in a checkpoint, a savepoint or
// the job's checkpoint directory (see savepointBase); it is created with its missing
// parents, as Flink creates the savepoint directory.
func (s *Storage) InitializeLocationForSavepoint(_ context.Context, jobID string, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	base, err := s.savepointBase(jobID, target)
	if err != nil {
		return nil, err
	}
	if err := s.fs.MkdirAll(base); err != nil {
		return nil, s.errs.Wrap(err, "create savepoint directory '%s'", base)
	}
	for attempt := 0; ; attempt++ {
		name, err := layout.SavepointDir(jobID)
		if err != nil {
			return nil, s.errs.Wrap(err, "savepoint of job %q", jobID)
		}
		dir := filepath.Join(base, name)
		err = s.fs.Mkdir(dir)
		if err == nil {
			return s.newLocation(checkpointID, dir, dir), nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return nil, s.errs.Wrap(err, "create savepoint directory '%s'", dir)
		}
	}
}

// ListCompletedCheckpoints implements sdk.CheckpointStorageAccess: the chk-N directories
// with _metadata, by increasing N.
func (a *access) ListCompletedCheckpoints(_ context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	dirs, err := a.checkpointDirs()
	if err != nil {
		return nil, err
	}
	var out []sdk.CompletedCheckpointStorageLocation
	for _, dir := range dirs {
		loc, err := a.s.completedAt(dir)
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

// OpenState implements sdk.CheckpointStorageAccess (see Storage.OpenState).
func (a *access) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	return a.s.OpenState(ctx, h)
}

// DiscardState implements sdk.CheckpointStorageAccess. It deletes the files of the
// handles, refusing any outside the checkpoint and savepoint directories but the files the
// job adopted (see adoptedPrefix), which it deletes with their markers; missing files are
// fine.
func (a *access) DiscardState(_ context.Context, handles []sdk.StreamStateHandle) error {
	var errs []error
	for _, h := range handles {
		if h.Ref == "" {
			continue
		}
		if name, err := a.s.name(h.Ref); err == nil && !a.ownShared(name) {
			done, err := a.discardAdopted(h.Ref)
			if err != nil {
				errs = append(errs, err)
			}
			if done || err != nil {
				continue
			}
		}
		if err := a.discardFile(h.Ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// discardFile deletes the state file ref names after checking where it is.
func (a *access) discardFile(ref string) error {
	p, err := a.s.name(ref)
	if err != nil {
		return a.s.errs.Wrap(err, "discard state %q", ref)
	}
	inside := false
	for _, root := range []string{a.s.cfg.Dir, a.s.cfg.SavepointDir} {
		inside = inside || root != "" && p != root && layout.Within(root, p)
	}
	if !inside {
		return a.s.errs.New(sdk.ErrInvalidArgument, "refusing to discard state %q: '%s' is outside the checkpoint directory '%s'", ref, p, a.s.cfg.Dir)
	}
	info, err := a.s.fs.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return a.s.errs.Wrap(err, "discard state %q: stat '%s'", ref, p)
	}
	if !info.IsRegular {
		return a.s.errs.New(sdk.ErrInvalidArgument, "refusing to discard state %q: '%s' is not a regular file", ref, p)
	}
	if err := a.s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a.s.errs.Wrap(err, "discard state %q: remove '%s'", ref, p)
	}
	return nil
}

// DisposeCheckpoint implements sdk.CheckpointStorageAccess (see Storage.DisposeCheckpoint).
func (a *access) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	return a.s.DisposeCheckpoint(ctx, loc)
}

// ListSharedState implements sdk.SharedStateLister: a handle for every regular file in
// <dir>/<job>/shared/, with the Ref its state stream returned, and for every file the job
// adopted, by its marker there. A missing directory lists nothing.
func (a *access) ListSharedState(_ context.Context) ([]sdk.StreamStateHandle, error) {
	dir := filepath.Join(a.jobDir, layout.SharedDir)
	entries, err := a.s.fs.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, a.s.errs.Wrap(err, "list shared state directory '%s'", dir)
	}
	var out []sdk.StreamStateHandle
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		p := filepath.Join(dir, e.Name)
		if strings.HasPrefix(e.Name, adoptedPrefix) {
			h, err := a.listedMarker(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // discarded meanwhile
			}
			if err != nil {
				return nil, a.s.errs.Wrap(err, "list shared state: read marker '%s'", p)
			}
			out = append(out, h)
			continue
		}
		info, err := a.s.fs.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // discarded meanwhile
		}
		if err != nil {
			return nil, a.s.errs.Wrap(err, "list shared state: stat '%s'", p)
		}
		if info.IsRegular {
			out = append(out, sdk.StreamStateHandle{Ref: a.s.ref(p), Size: info.Size, Scope: sdk.ScopeShared})
		}
	}
	return out, nil
}

// Close implements sdk.CheckpointStorageAccess; there is nothing to release.
func (a *access) Close() error { return nil }

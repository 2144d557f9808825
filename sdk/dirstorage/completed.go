package dirstorage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// ResolveCheckpoint implements sdk.CheckpointStorage. The pointer is a chk-N or savepoint
// directory or its _metadata file, as a path or a URI; nothing complete there is an error
// wrapping sdk.ErrNotFound that names the pointer.
func (s *Storage) ResolveCheckpoint(_ context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	var none sdk.CompletedCheckpointStorageLocation
	p, err := s.name(pointer)
	if err != nil {
		return none, s.errs.Wrap(err, "checkpoint pointer %q", pointer)
	}
	info, err := s.fs.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if filepath.Base(p) == layout.MetadataFile {
			if d, derr := s.fs.Stat(filepath.Dir(p)); derr == nil && d.IsDir {
				return none, s.missingMetadata(filepath.Dir(p), pointer)
			}
		}
		return none, s.errs.New(sdk.ErrNotFound, "checkpoint pointer %q: no such file or directory '%s'", pointer, p)
	case err != nil:
		return none, s.errs.Wrap(err, "checkpoint pointer %q: stat '%s'", pointer, p)
	case info.IsDir:
		return s.completedFor(p, pointer)
	case info.IsRegular:
		if filepath.Base(p) != layout.MetadataFile {
			return none, s.errs.New(sdk.ErrInvalidArgument,
				"checkpoint pointer %q: '%s' is a file but not a checkpoint metadata file (%s); pass the checkpoint directory or its %s file",
				pointer, p, layout.MetadataFile, layout.MetadataFile)
		}
		return s.completedFor(filepath.Dir(p), pointer)
	default:
		return none, s.errs.New(sdk.ErrInvalidArgument,
			"checkpoint pointer %q: '%s' is neither a directory nor a regular file", pointer, p)
	}
}

// completedAt returns the completed location whose directory is dir, or an error wrapping
// sdk.ErrNotFound when dir has no _metadata.
func (s *Storage) completedAt(dir string) (sdk.CompletedCheckpointStorageLocation, error) {
	meta := filepath.Join(dir, layout.MetadataFile)
	info, err := s.fs.Stat(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return sdk.CompletedCheckpointStorageLocation{}, s.missingMetadata(dir, dir)
	}
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, s.errs.Wrap(err, "stat metadata file '%s'", meta)
	}
	if !info.IsRegular {
		return sdk.CompletedCheckpointStorageLocation{}, s.errs.New(sdk.ErrInvalidArgument, "metadata '%s' is not a regular file", meta)
	}
	id, _ := layout.ParseCheckpointDir(filepath.Base(dir))
	return sdk.CompletedCheckpointStorageLocation{
		ExternalPointer: s.pointer(dir),
		Metadata:        sdk.StreamStateHandle{Ref: s.ref(meta), Size: info.Size, Scope: sdk.ScopeExclusive},
		CheckpointID:    id,
		Time:            info.ModTime,
	}, nil
}

// completedFor is completedAt for a directory a pointer designates: a missing-metadata
// error names the pointer too.
func (s *Storage) completedFor(dir, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	loc, err := s.completedAt(dir)
	if errors.Is(err, sdk.ErrNotFound) && pointer != dir {
		return loc, s.missingMetadata(dir, pointer)
	}
	return loc, err
}

// missingMetadata is Flink's error for a checkpoint directory without metadata; it also
// names the pointer when that is not the directory itself.
func (s *Storage) missingMetadata(dir, pointer string) error {
	msg := fmt.Sprintf("Cannot find meta data file '%s' in directory '%s'. Please try to load the checkpoint/savepoint directly from the metadata file instead of the directory.",
		layout.MetadataFile, dir)
	if pointer != dir {
		msg += fmt.Sprintf(" (checkpoint pointer %q)", pointer)
	}
	return s.errs.New(sdk.ErrNotFound, "%s", msg)
}

// DisposeCheckpoint deletes a completed checkpoint or savepoint of any job: its _metadata
// file first, so that it never resolves again, then the files the storage wrote in its
// directory (state files, under the random names createStateFile gives them, and temporary
// metadata files), then the directory once it is empty. It never removes a directory with
// what is in it: an entry the storage did not write there stays, with the directory, and
// the error, wrapping sdk.ErrInvalidArgument, names it. It disposes of chk-N and savepoint
// directories only; a missing one is fine.
func (s *Storage) DisposeCheckpoint(_ context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	dir, err := s.name(loc.ExternalPointer)
	if err != nil {
		return s.errs.Wrap(err, "dispose checkpoint %q", loc.ExternalPointer)
	}
	if filepath.Base(dir) == layout.MetadataFile {
		dir = filepath.Dir(dir)
	}
	name := filepath.Base(dir)
	if _, ok := layout.ParseCheckpointDir(name); !ok && !layout.IsSavepointDir(name) {
		return s.errs.New(sdk.ErrInvalidArgument,
			"refusing to dispose checkpoint %q: '%s' is not a chk-N or savepoint directory", loc.ExternalPointer, dir)
	}
	meta := filepath.Join(dir, layout.MetadataFile)
	if err := s.fs.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.errs.Wrap(err, "dispose checkpoint: remove metadata file '%s'", meta)
	}
	entries, err := s.fs.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return s.errs.Wrap(err, "dispose checkpoint: list directory '%s'", dir)
	}
	var foreign []string
	for _, e := range entries {
		if e.IsDir || !ownFile(e.Name) {
			foreign = append(foreign, e.Name)
			continue
		}
		p := filepath.Join(dir, e.Name)
		if err := s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s.errs.Wrap(err, "dispose checkpoint: remove state file '%s'", p)
		}
	}
	if len(foreign) > 0 {
		return s.errs.New(sdk.ErrInvalidArgument,
			"disposed of checkpoint %q: its metadata and state files are deleted, but its directory '%s' stays: it holds what the storage did not write there: %s; remove that yourself if nothing needs it",
			loc.ExternalPointer, dir, quoteNames(foreign))
	}
	if err := s.fs.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.errs.Wrap(err, "dispose checkpoint: remove directory '%s'", dir)
	}
	return nil
}

// ownFile reports whether a file of a checkpoint directory has a name the storage gives:
// a state file's (stateFileName) or a temporary metadata file's.
func ownFile(name string) bool {
	if strings.HasPrefix(name, layout.MetadataTempPrefix) {
		return true
	}
	if len(name) != stateFileNameLen {
		return false
	}
	for _, c := range name {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// quoteNames quotes the first few names, and says how many more there are.
func quoteNames(names []string) string {
	const shown = 5
	var b strings.Builder
	for i, n := range names {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(names)-shown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}

package fsstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// resolve finds the completed checkpoint or savepoint a pointer designates.
func resolve(store fsys.FS, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	var none sdk.CompletedCheckpointStorageLocation
	p, err := localPath(pointer)
	if err != nil {
		return none, wrapf(err, "checkpoint pointer %q", pointer)
	}
	info, err := store.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if filepath.Base(p) == layout.MetadataFile {
			if d, derr := store.Stat(filepath.Dir(p)); derr == nil && d.IsDir {
				return none, missingMetadata(filepath.Dir(p), pointer)
			}
		}
		return none, errorf(sdk.ErrNotFound, nil, "checkpoint pointer %q: no such file or directory '%s'", pointer, p)
	case err != nil:
		return none, wrapf(err, "checkpoint pointer %q: stat '%s'", pointer, p)
	case info.IsDir:
		return completedFor(store, p, pointer)
	case info.IsRegular:
		if filepath.Base(p) != layout.MetadataFile {
			return none, errorf(sdk.ErrInvalidArgument, nil,
				"checkpoint pointer %q: '%s' is a file but not a checkpoint metadata file (%s); pass the checkpoint directory or its %s file",
				pointer, p, layout.MetadataFile, layout.MetadataFile)
		}
		return completedFor(store, filepath.Dir(p), pointer)
	default:
		return none, errorf(sdk.ErrInvalidArgument, nil,
			"checkpoint pointer %q: '%s' is neither a directory nor a regular file", pointer, p)
	}
}

// completedAt returns the completed location whose directory is dir, or an error wrapping
// sdk.ErrNotFound when dir has no _metadata.
func completedAt(store fsys.FS, dir string) (sdk.CompletedCheckpointStorageLocation, error) {
	meta := filepath.Join(dir, layout.MetadataFile)
	info, err := store.Stat(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return sdk.CompletedCheckpointStorageLocation{}, missingMetadata(dir, dir)
	}
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, wrapf(err, "stat metadata file '%s'", meta)
	}
	if !info.IsRegular {
		return sdk.CompletedCheckpointStorageLocation{}, errorf(sdk.ErrInvalidArgument, nil, "metadata '%s' is not a regular file", meta)
	}
	id, _ := layout.ParseCheckpointDir(filepath.Base(dir))
	return sdk.CompletedCheckpointStorageLocation{
		ExternalPointer: pointerOf(dir),
		Metadata:        sdk.StreamStateHandle{Ref: fileURI(meta), Size: info.Size, Scope: sdk.ScopeExclusive},
		CheckpointID:    id,
		Time:            info.ModTime,
	}, nil
}

// missingMetadata is Flink's error for a checkpoint directory without metadata; it also
// names the pointer when that is not the directory itself.
func missingMetadata(dir, pointer string) error {
	msg := fmt.Sprintf("Cannot find meta data file '%s' in directory '%s'. Please try to load the checkpoint/savepoint directly from the metadata file instead of the directory.",
		layout.MetadataFile, dir)
	if pointer != dir {
		msg += fmt.Sprintf(" (checkpoint pointer %q)", pointer)
	}
	return errorf(sdk.ErrNotFound, nil, "%s", msg)
}

// completedFor is completedAt for a directory a pointer designates: a missing-metadata
// error names the pointer too.
func completedFor(store fsys.FS, dir, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	loc, err := completedAt(store, dir)
	if errors.Is(err, sdk.ErrNotFound) && pointer != dir {
		return loc, missingMetadata(dir, pointer)
	}
	return loc, err
}

// isLocationDirName reports whether name is one fsstorage gives checkpoint or savepoint
// directories, the only directories DisposeCheckpoint removes.
func isLocationDirName(name string) bool {
	if _, ok := layout.ParseCheckpointDir(name); ok {
		return true
	}
	return layout.IsSavepointDir(name)
}

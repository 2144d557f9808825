package jmstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// finalize completes the location with metadata: in memory, and on disk when the location
// has a directory. The file is published before the checkpoint counts as complete.
func (l *location) finalize(metadata []byte) (*checkpoint, error) {
	blobs, err := l.st.beginFinalize(l)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	if l.diskDir != "" {
		data := encodeFile(fileHeader{job: l.job, id: l.id, savepoint: l.savepoint}, metadata, blobs)
		info, err := publishFile(l.diskDir, data)
		if err != nil {
			l.st.endFinalize(l, nil, t, false)
			return nil, wrapf(err, "write checkpoint %d of job %q", l.id, l.job)
		}
		t = info.ModTime()
	}
	c, ok := l.st.endFinalize(l, metadata, t, true)
	if !ok {
		if l.diskDir != "" {
			os.Remove(filepath.Join(l.diskDir, layout.MetadataFile))
			os.RemoveAll(l.diskDir)
		}
		return nil, errorf(sdk.ErrInvalidArgument, "checkpoint location %q was disposed while its metadata was written", l.pointer())
	}
	return c, nil
}

// resolve finds the completed checkpoint a pointer designates, in memory or on disk.
func (s *Storage) resolve(pointer string) (*checkpoint, error) {
	if strings.HasPrefix(pointer, refScheme) {
		if c, ok := s.completedAt(pointer); ok {
			return c, nil
		}
		return nil, errorf(sdk.ErrNotFound,
			"checkpoint pointer %q: no such checkpoint in this jmstorage process (without a dir, checkpoints live only in the plugin's memory and die with it)", pointer)
	}
	p, err := layout.LocalPath(pointer)
	if err != nil {
		return nil, wrapf(err, "checkpoint pointer %q", pointer)
	}
	dir := p
	info, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if filepath.Base(p) == layout.MetadataFile {
			if d, derr := os.Stat(filepath.Dir(p)); derr == nil && d.IsDir() {
				return nil, missingMetadata(filepath.Dir(p), pointer)
			}
		}
		return nil, errorf(sdk.ErrNotFound, "checkpoint pointer %q: no such file or directory '%s'", pointer, p)
	case err != nil:
		return nil, wrapf(err, "checkpoint pointer %q", pointer)
	case info.Mode().IsRegular():
		if filepath.Base(p) != layout.MetadataFile {
			return nil, errorf(sdk.ErrInvalidArgument,
				"checkpoint pointer %q: '%s' is a file but not a checkpoint metadata file (%s)", pointer, p, layout.MetadataFile)
		}
		dir = filepath.Dir(p)
	case !info.IsDir():
		return nil, errorf(sdk.ErrInvalidArgument, "checkpoint pointer %q: '%s' is neither a directory nor a regular file", pointer, p)
	}
	if c, ok := s.completedAt(dir); ok {
		return c, nil
	}
	return s.loadDir(dir, pointer)
}

// missingMetadata is Flink's error for a checkpoint directory without metadata; it also
// names the pointer when that is not the directory itself.
func missingMetadata(dir, pointer string) error {
	msg := fmt.Sprintf("Cannot find meta data file '%s' in directory '%s'. Please try to load the checkpoint/savepoint directly from the metadata file instead of the directory.", layout.MetadataFile, dir)
	if pointer != dir {
		msg += fmt.Sprintf(" (checkpoint pointer %q)", pointer)
	}
	return errorf(sdk.ErrNotFound, "%s", msg)
}

// loadDir reads the checkpoint file in dir and registers the checkpoint and its blobs.
func (s *Storage) loadDir(dir, pointer string) (*checkpoint, error) {
	meta := filepath.Join(dir, layout.MetadataFile)
	b, err := os.ReadFile(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingMetadata(dir, pointer)
	}
	if err != nil {
		return nil, wrapf(err, "read checkpoint file '%s'", meta)
	}
	h, metadata, blobs, err := decodeFile(b)
	if err != nil {
		return nil, wrapf(err, "checkpoint file '%s'", meta)
	}
	info, err := os.Stat(meta)
	if err != nil {
		return nil, wrapf(err, "stat '%s'", meta)
	}
	c := &checkpoint{job: h.job, id: h.id, pointer: dir, metadata: metadata, time: info.ModTime(), savepoint: h.savepoint}
	return s.register(c, blobs), nil
}

// checkpointDirs returns the chk-N directories of job on disk, by increasing N.
func (s *Storage) checkpointDirs(job string) ([]string, error) {
	jobDir := filepath.Join(s.cfg.dir, job)
	entries, err := os.ReadDir(jobDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapf(err, "list job directory '%s'", jobDir)
	}
	type numbered struct {
		id  int64
		dir string
	}
	var dirs []numbered
	for _, e := range entries {
		if id, ok := layout.ParseCheckpointDir(e.Name()); ok && e.IsDir() {
			dirs = append(dirs, numbered{id, filepath.Join(jobDir, e.Name())})
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].id < dirs[j].id })
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = d.dir
	}
	return out, nil
}

// listOnDisk returns the job's completed checkpoints found on disk, oldest first, loading
// the ones not held in memory.
func (s *Storage) listOnDisk(job string) ([]*checkpoint, error) {
	dirs, err := s.checkpointDirs(job)
	if err != nil {
		return nil, err
	}
	var out []*checkpoint
	for _, dir := range dirs {
		c, ok := s.completedAt(dir)
		if !ok {
			c, err = s.loadDir(dir, dir)
			if errors.Is(err, sdk.ErrNotFound) {
				continue // never completed
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// lazyLoad looks for the blob ref in checkpoint files not held in memory (written by an
// earlier process) and loads the first one that has it.
func (s *Storage) lazyLoad(ref string) error {
	p, ok := parseRef(ref)
	if !ok {
		return nil
	}
	var dirs []string
	switch {
	case p.location == layout.SharedDir && s.cfg.dir != "":
		all, err := s.checkpointDirs(p.job)
		if err != nil {
			return err
		}
		for i := len(all) - 1; i >= 0; i-- { // newest first
			dirs = append(dirs, all[i])
		}
	case layout.IsSavepointDir(p.location) && s.cfg.savepointDir != "":
		dirs = []string{filepath.Join(s.cfg.savepointDir, p.location)}
	case s.cfg.dir != "" && !layout.IsSavepointDir(p.location):
		dirs = []string{filepath.Join(s.cfg.dir, p.job, p.location)}
	}
	for _, dir := range dirs {
		if _, held := s.completedAt(dir); held {
			continue
		}
		if _, err := s.loadDir(dir, dir); err != nil && !errors.Is(err, sdk.ErrNotFound) {
			return err
		}
		if _, ok := s.blob(ref); ok {
			return nil
		}
	}
	return nil
}

// cleanLeftovers removes the job's chk-N directories without _metadata and temporary
// metadata files next to published ones.
func (s *Storage) cleanLeftovers(job string) error {
	if s.cfg.dir == "" {
		return nil
	}
	dirs, err := s.checkpointDirs(job)
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		meta := filepath.Join(dir, layout.MetadataFile)
		if _, err := os.Stat(meta); errors.Is(err, fs.ErrNotExist) {
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, wrapf(err, "remove incomplete checkpoint directory '%s'", dir))
			}
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, wrapf(err, "list '%s'", dir))
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), layout.MetadataTempPrefix) {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, wrapf(err, "remove temporary file in '%s'", dir))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// disposeOnDisk removes a chk-N or savepoint directory: its _metadata first, then the rest.
// A missing one is fine.
func disposeOnDisk(dir, pointer string) error {
	name := filepath.Base(dir)
	if _, ok := layout.ParseCheckpointDir(name); !ok && !layout.IsSavepointDir(name) {
		return errorf(sdk.ErrInvalidArgument, "refusing to dispose checkpoint %q: '%s' is not a chk-N or savepoint directory", pointer, dir)
	}
	meta := filepath.Join(dir, layout.MetadataFile)
	if err := os.Remove(meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "dispose checkpoint: remove '%s'", meta)
	}
	if err := os.RemoveAll(dir); err != nil {
		return wrapf(err, "dispose checkpoint: remove '%s'", dir)
	}
	return nil
}

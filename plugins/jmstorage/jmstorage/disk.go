package jmstorage

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// finalize completes the location with metadata: in memory, and on disk when the location
// has a directory. The file is published before the checkpoint counts as complete.
func (l *location) finalize(ctx context.Context, metadata []byte) (*checkpoint, error) {
	blobs, err := l.st.beginFinalize(l)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	var onDisk sdk.CompletedCheckpointStorageLocation
	if l.disk != nil {
		data := encodeFile(fileHeader{job: l.job, id: l.id, savepoint: l.savepoint}, metadata, blobs)
		if onDisk, err = publish(ctx, l.disk, data); err != nil {
			l.st.endFinalize(l, nil, t, false)
			return nil, errs.Wrap(err, "write checkpoint %d of job %q", l.id, l.job)
		}
		t = onDisk.Time
	}
	c, ok := l.st.endFinalize(l, metadata, t, true)
	if !ok {
		if l.disk != nil {
			l.st.disk.DisposeCheckpoint(ctx, onDisk)
		}
		return nil, errs.New(sdk.ErrInvalidArgument, "checkpoint location %q was disposed while its metadata was written", l.pointer())
	}
	return c, nil
}

// publish writes data as the metadata of loc, a location of the directory storage.
func publish(ctx context.Context, loc sdk.CheckpointStorageLocation, data []byte) (sdk.CompletedCheckpointStorageLocation, error) {
	out, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	defer out.Close()
	if _, err := out.Write(data); err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	return out.CloseAndFinalize(ctx)
}

// resolve finds the completed checkpoint a pointer designates, in memory or on disk.
func (s *Storage) resolve(ctx context.Context, pointer string) (*checkpoint, error) {
	if strings.HasPrefix(pointer, refScheme) {
		if c, ok := s.completedAt(pointer); ok {
			return c, nil
		}
		return nil, errs.New(sdk.ErrNotFound,
			"checkpoint pointer %q: no such checkpoint in this jmstorage process (without a dir, checkpoints live only in the plugin's memory and die with it)", pointer)
	}
	done, err := s.disk.ResolveCheckpoint(ctx, pointer)
	if err != nil {
		return nil, err
	}
	return s.held(ctx, done)
}

// held returns the checkpoint of a completed location on disk: the one held in memory, or
// the one its file holds, registered with its blobs.
func (s *Storage) held(ctx context.Context, done sdk.CompletedCheckpointStorageLocation) (*checkpoint, error) {
	if c, ok := s.completedAt(done.ExternalPointer); ok {
		return c, nil
	}
	r, err := s.disk.OpenState(ctx, done.Metadata)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, errs.Wrap(err, "read checkpoint file %q", done.Metadata.Ref)
	}
	h, metadata, blobs, err := decodeFile(b)
	if err != nil {
		return nil, errs.Wrap(err, "checkpoint file %q", done.Metadata.Ref)
	}
	c := &checkpoint{job: h.job, id: h.id, pointer: done.ExternalPointer, metadata: metadata, time: done.Time, savepoint: h.savepoint}
	return s.register(c, blobs), nil
}

// lazyLoad looks for the blob ref in checkpoint files not held in memory (written by an
// earlier process) and loads the first one that has it.
func (s *Storage) lazyLoad(ctx context.Context, ref string) error {
	p, ok := parseRef(ref)
	if !ok {
		return nil
	}
	var candidates []sdk.CompletedCheckpointStorageLocation
	var err error
	switch {
	case p.location == layout.SharedDir && s.cfg.dir != "":
		var a sdk.CheckpointStorageAccess
		if a, err = s.disk.CreateCheckpointStorage(ctx, p.job); err == nil {
			candidates, err = a.ListCompletedCheckpoints(ctx)
			slices.Reverse(candidates) // newest first
		}
	case layout.IsSavepointDir(p.location) && s.cfg.savepointDir != "":
		candidates, err = s.resolvable(ctx, filepath.Join(s.cfg.savepointDir, p.location))
	case s.cfg.dir != "" && !layout.IsSavepointDir(p.location):
		candidates, err = s.resolvable(ctx, filepath.Join(s.cfg.dir, p.job, p.location))
	}
	if err != nil {
		return err
	}
	for _, done := range candidates {
		if _, err := s.held(ctx, done); err != nil {
			return err
		}
		if _, ok := s.blob(ref); ok {
			return nil
		}
	}
	return nil
}

// resolvable returns the completed checkpoint in dir, or none.
func (s *Storage) resolvable(ctx context.Context, dir string) ([]sdk.CompletedCheckpointStorageLocation, error) {
	done, err := s.disk.ResolveCheckpoint(ctx, dir)
	if errors.Is(err, sdk.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []sdk.CompletedCheckpointStorageLocation{done}, nil
}

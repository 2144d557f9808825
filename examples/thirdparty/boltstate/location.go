package boltstate

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
)

// location is where checkpoint id (or a savepoint) is being written, in a checkpoint file.
type location struct {
	file      string
	id        int64
	ref       string // LocationReference: the external pointer it gets once complete
	savepoint bool
	inline    int // data inline threshold
}

var _ sdk.CheckpointStorageLocation = (*location)(nil)

// update runs fn in a write transaction of the location's file. The file stays open while
// the job's access holds it; a savepoint's file is opened for the call.
func (l *location) update(fn func(tx *bolt.Tx) error) error {
	db, release, err := acquire(l.file, false)
	if err != nil {
		return err
	}
	defer release()
	return db.Update(fn)
}

// CreateCheckpointStateOutputStream opens a new state stream.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return newOutStream(l, scope), nil
}

// CreateMetadataOutputStream starts writing the checkpoint's metadata.
func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	return &metaStream{loc: l}, nil
}

// DisposeOnFailure deletes the checkpoint's bucket: its exclusive state and any metadata.
// Shared state stays.
func (l *location) DisposeOnFailure(ctx context.Context) error {
	err := l.update(func(tx *bolt.Tx) error {
		if checkpointBucket(tx, l.id) == nil {
			return nil
		}
		return tx.Bucket(bucketCheckpoints).DeleteBucket(u64(uint64(l.id)))
	})
	if err != nil {
		return fmt.Errorf("dispose location %s: %w", l.ref, err)
	}
	return nil
}

// LocationReference returns the pointer the checkpoint will have once complete.
func (l *location) LocationReference() string { return l.ref }

// metaStream buffers a checkpoint's metadata; CloseAndFinalize writes it and the
// completion mark in one fsynced transaction, so the checkpoint becomes complete
// atomically.
type metaStream struct {
	loc    *location
	buf    []byte
	closed bool
}

// Write implements io.Writer.
func (m *metaStream) Write(p []byte) (int, error) {
	if m.closed {
		return 0, fmt.Errorf("write to the closed metadata stream of %s", m.loc.ref)
	}
	m.buf = append(m.buf, p...)
	return len(p), nil
}

// CloseAndFinalize makes the checkpoint complete. It fails if its metadata already exists.
func (m *metaStream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	if m.closed {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("CloseAndFinalize of the closed metadata stream of %s", m.loc.ref)
	}
	m.closed = true
	l := m.loc
	mark := doneMark{time: time.Now(), metaSize: int64(len(m.buf))}
	err := l.update(func(tx *bolt.Tx) error {
		cb := checkpointBucket(tx, l.id)
		if cb == nil {
			return fmt.Errorf("location no longer exists (disposed): %w", sdk.ErrNotFound)
		}
		if cb.Get(keyDone) != nil {
			return fmt.Errorf("metadata of checkpoint %d already exists", l.id)
		}
		if cb.Bucket(bucketMeta) != nil {
			if err := cb.DeleteBucket(bucketMeta); err != nil {
				return err
			}
		}
		mb, err := cb.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		for i, off := uint32(0), 0; off < len(m.buf) || i == 0; i, off = i+1, off+chunkSize {
			if err := mb.Put(u32(i), m.buf[off:min(off+chunkSize, len(m.buf))]); err != nil {
				return err
			}
		}
		return cb.Put(keyDone, mark.encode())
	})
	m.buf = nil
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("finalize metadata of %s: %w", l.ref, err)
	}
	return completedLocation(l.ref, l.file, l.id, mark), nil
}

// Close without CloseAndFinalize discards the metadata written so far.
func (m *metaStream) Close() error {
	m.closed, m.buf = true, nil
	return nil
}

// completedLocation describes complete checkpoint id of file.
func completedLocation(pointer, file string, id int64, d doneMark) sdk.CompletedCheckpointStorageLocation {
	return sdk.CompletedCheckpointStorageLocation{
		ExternalPointer: pointer,
		Metadata: sdk.StreamStateHandle{
			Ref:   streamRef{file: file, id: id, meta: true}.String(),
			Size:  d.metaSize,
			Scope: sdk.ScopeExclusive,
		},
		CheckpointID: id,
		Time:         d.time,
	}
}

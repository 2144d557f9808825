package boltstate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// access is one job's checkpoint storage. It keeps the job's checkpoint file open from
// InitializeBaseLocationsForCheckpoint to Close.
type access struct {
	cfg  config
	job  string
	file string

	mu      sync.Mutex
	db      *bolt.DB
	release func()
	closed  bool
}

var _ sdk.CheckpointStorageAccess = (*access)(nil)

// jobDB returns the job's checkpoint file, opening (and creating) it the first time.
func (a *access) jobDB() (*bolt.DB, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, fmt.Errorf("checkpoint storage of job %q is closed", a.job)
	}
	if a.db == nil {
		db, release, err := acquire(a.file, true)
		if err != nil {
			return nil, fmt.Errorf("checkpoint storage of job %q: %w", a.job, err)
		}
		a.db, a.release = db, release
	}
	return a.db, nil
}

// SupportsHighlyAvailableStorage is false: the checkpoint file is on this machine's disk
// (bbolt needs a local file system). Checkpoints survive crashes of the runner and the
// plugin, not the loss of the machine.
func (a *access) SupportsHighlyAvailableStorage() bool { return false }

// HasDefaultSavepointLocation reports whether savepoint-dir is set.
func (a *access) HasDefaultSavepointLocation() bool { return a.cfg.savepointDir != "" }

// InitializeBaseLocationsForCheckpoint creates the job's checkpoint file and deletes the
// checkpoints in it that never completed.
func (a *access) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
	db, err := a.jobDB()
	if err != nil {
		return err
	}
	var removed []int64
	err = db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketCheckpoints)
		var stale [][]byte
		c := root.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil && root.Bucket(k).Get(keyDone) == nil {
				stale = append(stale, bytes.Clone(k))
			}
		}
		for _, k := range stale {
			if err := root.DeleteBucket(k); err != nil {
				return err
			}
			removed = append(removed, int64(beUint64(k)))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("checkpoint storage of job %q: remove incomplete checkpoints from %s: %w", a.job, a.file, err)
	}
	if len(removed) > 0 {
		sdk.Logger().Info("removed checkpoints that never completed", "job", a.job, "file", a.file, "checkpoints", removed)
	}
	return nil
}

// InitializeLocationForCheckpoint creates the bucket of checkpoint id.
func (a *access) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	if id < 0 {
		return nil, fmt.Errorf("checkpoint id %d: %w", id, sdk.ErrInvalidArgument)
	}
	db, err := a.jobDB()
	if err != nil {
		return nil, err
	}
	ptr := checkpointPointer(a.file, id)
	err = db.Update(func(tx *bolt.Tx) error {
		cb, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists(u64(uint64(id)))
		if err != nil {
			return err
		}
		if cb.Get(keyDone) != nil {
			return fmt.Errorf("checkpoint %d is already complete: %w", id, sdk.ErrInvalidArgument)
		}
		_, err = cb.CreateBucketIfNotExists(bucketState)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("initialize location %s: %w", ptr, err)
	}
	return &location{file: a.file, id: id, ref: ptr, inline: a.cfg.inlineThreshold}, nil
}

// errNoSavepointLocation is Flink's message when a savepoint has nowhere to go.
var errNoSavepointLocation = fmt.Errorf("No savepoint location given and no default location configured.: %w", sdk.ErrInvalidArgument)

// InitializeLocationForSavepoint creates savepoint-<job>-<random>/savepoint.db under target
// (or the default savepoint directory).
func (a *access) InitializeLocationForSavepoint(ctx context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	if target == "" {
		target = a.cfg.savepointDir
	}
	if target == "" {
		return nil, errNoSavepointLocation
	}
	dir, err := layout.LocalPath(target)
	if err != nil {
		return nil, fmt.Errorf("savepoint target %q: %w", target, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("savepoint target %q: %w", target, err)
	}
	prefix := a.job
	if len(prefix) > 12 {
		prefix = prefix[:12]
	}
	spDir, err := os.MkdirTemp(dir, layout.SavepointPrefix+prefix+"-")
	if err != nil {
		return nil, fmt.Errorf("savepoint target %q: %w", target, err)
	}
	loc := &location{file: filepath.Join(spDir, savepointFileName), id: id, ref: spDir, savepoint: true, inline: a.cfg.inlineThreshold}
	db, release, err := acquire(loc.file, true)
	if err != nil {
		return nil, fmt.Errorf("savepoint %s: %w", spDir, err)
	}
	defer release()
	err = db.Update(func(tx *bolt.Tx) error {
		cb, err := tx.Bucket(bucketCheckpoints).CreateBucket(u64(uint64(id)))
		if err != nil {
			return err
		}
		_, err = cb.CreateBucket(bucketState)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("initialize savepoint %s: %w", spDir, err)
	}
	return loc, nil
}

// ListCompletedCheckpoints lists the job's complete checkpoints, oldest first.
func (a *access) ListCompletedCheckpoints(ctx context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	db, err := a.jobDB()
	if err != nil {
		return nil, err
	}
	var out []sdk.CompletedCheckpointStorageLocation
	err = db.View(func(tx *bolt.Tx) error {
		return eachCompleted(tx, func(id int64, d doneMark) {
			out = append(out, completedLocation(checkpointPointer(a.file, id), a.file, id, d))
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of job %q in %s: %w", a.job, a.file, err)
	}
	return out, nil
}

// OpenState returns the bytes of a handle written by this plugin, in any checkpoint file.
func (a *access) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	ref, err := parseRef(h.Ref)
	if err != nil {
		return nil, err
	}
	return openStream(ref)
}

// DiscardState deletes the streams of handles; missing ones are not an error.
func (a *access) DiscardState(ctx context.Context, handles []sdk.StreamStateHandle) error {
	var errs []error
	for _, h := range handles {
		if h.Ref == "" {
			continue
		}
		ref, err := parseRef(h.Ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		db, release, err := acquire(ref.file, false)
		if errors.Is(err, sdk.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("discard state %s: %w", h.Ref, err))
			continue
		}
		if err := db.Update(func(tx *bolt.Tx) error { return deleteStream(tx, ref) }); err != nil {
			errs = append(errs, fmt.Errorf("discard state %s: %w", h.Ref, err))
		}
		release()
	}
	return errors.Join(errs...)
}

// DisposeCheckpoint deletes a complete checkpoint's bucket: its metadata and exclusive
// state go in one transaction. For a savepoint, its file is left empty.
func (a *access) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	ptr, err := parsePointer(loc.ExternalPointer)
	if err != nil {
		return err
	}
	db, release, err := acquire(ptr.file, false)
	if errors.Is(err, sdk.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dispose checkpoint %q: %w", loc.ExternalPointer, err)
	}
	defer release()
	err = db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketCheckpoints)
		if !ptr.savepoint {
			if root.Bucket(u64(uint64(ptr.id))) == nil {
				return nil
			}
			return root.DeleteBucket(u64(uint64(ptr.id)))
		}
		var ids [][]byte
		c := root.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				ids = append(ids, bytes.Clone(k))
			}
		}
		for _, k := range ids {
			if err := root.DeleteBucket(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dispose checkpoint %q: %w", loc.ExternalPointer, err)
	}
	return nil
}

// Close releases the job's checkpoint file.
func (a *access) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed && a.release != nil {
		a.release()
	}
	a.closed, a.db = true, nil
	return nil
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

package boltstate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// ResolveCheckpoint resolves <dir>/<job>/chk-N, a savepoint directory or its savepoint.db
// (paths or file:// URIs). Nothing complete there is an error wrapping sdk.ErrNotFound.
func (p *Plugin) ResolveCheckpoint(ctx context.Context, external string) (sdk.CompletedCheckpointStorageLocation, error) {
	var none sdk.CompletedCheckpointStorageLocation
	if strings.TrimSpace(external) == "" {
		return none, fmt.Errorf("resolve checkpoint: empty pointer: %w", sdk.ErrInvalidArgument)
	}
	ptr, err := parsePointer(external)
	if err != nil {
		return none, err
	}
	db, release, err := acquire(ptr.file, false)
	if errors.Is(err, sdk.ErrNotFound) {
		return none, fmt.Errorf("no boltdb checkpoint or savepoint at %q: %w", external, sdk.ErrNotFound)
	}
	if err != nil {
		return none, fmt.Errorf("resolve checkpoint %q: %w", external, err)
	}
	defer release()
	var done sdk.CompletedCheckpointStorageLocation
	err = db.View(func(tx *bolt.Tx) error {
		if ptr.savepoint {
			var found bool
			err := eachCompleted(tx, func(id int64, d doneMark) {
				done, found = completedLocation(ptr.external, ptr.file, id, d), true
			})
			if err == nil && !found {
				err = fmt.Errorf("savepoint %q is not complete: %w", external, sdk.ErrNotFound)
			}
			return err
		}
		cb := checkpointBucket(tx, ptr.id)
		if cb == nil {
			return fmt.Errorf("no checkpoint %d in %s (pointer %q): %w", ptr.id, ptr.file, external, sdk.ErrNotFound)
		}
		d, ok, err := completion(cb)
		if err != nil {
			return fmt.Errorf("checkpoint %q: %w", external, err)
		}
		if !ok {
			return fmt.Errorf("checkpoint %q is not complete: %w", external, sdk.ErrNotFound)
		}
		done = completedLocation(ptr.external, ptr.file, ptr.id, d)
		return nil
	})
	return done, err
}

// eachCompleted calls fn for every complete checkpoint of the file, oldest first.
func eachCompleted(tx *bolt.Tx, fn func(id int64, d doneMark)) error {
	root := tx.Bucket(bucketCheckpoints)
	if root == nil {
		return nil
	}
	c := root.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || len(k) != 8 {
			continue
		}
		id := int64(beUint64(k))
		d, ok, err := completion(root.Bucket(k))
		if err != nil {
			return fmt.Errorf("checkpoint %d: %w", id, err)
		}
		if ok {
			fn(id, d)
		}
	}
	return nil
}

// CreateCheckpointStorage returns the storage of job's checkpoints, in
// <dir>/<job>/checkpoints.db. It needs a checkpoint directory (execution.checkpointing.dir).
func (p *Plugin) CreateCheckpointStorage(ctx context.Context, job string) (sdk.CheckpointStorageAccess, error) {
	cfg := p.config()
	if cfg.checkpointDir == "" {
		return nil, fmt.Errorf("boltdb checkpoint storage of job %q: no checkpoint directory: set execution.checkpointing.dir (option %q): %w",
			job, sdk.OptionCheckpointDir, sdk.ErrInvalidArgument)
	}
	if err := layout.CheckJobID(job); err != nil {
		return nil, fmt.Errorf("boltdb checkpoint storage: %w", err)
	}
	return &access{cfg: cfg, job: job, file: filepath.Join(cfg.checkpointDir, job, jobFileName)}, nil
}

package leveldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
)

// defaultPageSize is the number of pairs Scan returns when its limit is <= 0.
const defaultPageSize = 1024

// arenaChunk is the size of the buffers Scan copies keys and values into.
const arenaChunk = 64 << 10

// errClosed is returned by calls on a closed keyed backend.
var errClosed = errors.New("keyed backend is closed")

// keyed is the keyed state backend of one operator subtask: one goleveldb database.
type keyed struct {
	params sdk.KeyedBackendParams
	name   string // for errors: job/operator/subtask
	dir    string
	db     *goleveldb.DB
	batch  *goleveldb.Batch // reused by Write, which one goroutine calls at a time
	// tracker tracks the keys written for incremental checkpoints; nil without them.
	tracker *tracker
	// release gives the keyed backend's memory budget back to the process (processMemory).
	release func()

	closeOnce sync.Once
	closed    atomic.Bool
	closeErr  error
}

func (kb *keyed) check() error {
	if kb.closed.Load() {
		return fmt.Errorf("%s (%s): %w", kb.name, kb.dir, errClosed)
	}
	return nil
}

// Get reads many keys, one point lookup each (bloom filters skip the tables without them).
func (kb *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	values := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := kb.db.Get(k, nil)
		switch {
		case err == nil:
			if v == nil {
				v = []byte{}
			}
			values[i] = v // goleveldb returns a copy
		case errors.Is(err, goleveldb.ErrNotFound):
		default:
			return nil, fmt.Errorf("%s: get in %s: %w", kb.name, kb.dir, err)
		}
	}
	return values, nil
}

// Write applies mutations in order as one atomic batch.
func (kb *keyed) Write(ctx context.Context, mutations []sdk.Mutation) error {
	if err := kb.check(); err != nil {
		return err
	}
	b := kb.batch
	b.Reset()
	for _, mu := range mutations {
		if mu.Delete {
			b.Delete(mu.Key)
		} else {
			b.Put(mu.Key, mu.Value)
		}
	}
	if err := kb.db.Write(b, nil); err != nil {
		return fmt.Errorf("%s: write %d mutations in %s: %w", kb.name, len(mutations), kb.dir, err)
	}
	if kb.tracker != nil {
		kb.tracker.wrote(mutations)
	}
	return nil
}

// Scan returns up to limit pairs in [start, end) in key order, copied.
func (kb *keyed) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultPageSize
	}
	it := kb.db.NewIterator(&util.Range{Start: start, Limit: end}, nil)
	defer it.Release()
	var out []sdk.KV
	var arena []byte
	for len(out) < limit && it.Next() {
		k, v := it.Key(), it.Value()
		if n := len(k) + len(v); cap(arena)-len(arena) < n {
			arena = make([]byte, 0, max(arenaChunk, n))
		}
		a := len(arena)
		arena = append(arena, k...)
		b := len(arena)
		arena = append(arena, v...)
		out = append(out, sdk.KV{Key: arena[a:b:b], Value: arena[b:len(arena):len(arena)]})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("%s: scan in %s: %w", kb.name, kb.dir, err)
	}
	return out, nil
}

// NotifyCheckpointComplete makes, with incremental checkpoints, the checkpoint's files the
// base of the next delta and forgets the keys written before it. Full snapshots keep no
// state between checkpoints.
func (kb *keyed) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	if kb.tracker != nil {
		kb.tracker.completed(checkpointID)
	}
	return nil
}

// NotifyCheckpointAborted keeps, with incremental checkpoints, the keys of the aborted
// snapshot for the next one; the runner releases the snapshot itself.
func (kb *keyed) NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	if kb.tracker != nil {
		kb.tracker.aborted(checkpointID)
	}
	return nil
}

// Close closes the database and removes its directory (and the job's directory when it is
// left empty).
func (kb *keyed) Close() error {
	kb.closeOnce.Do(func() {
		kb.closed.Store(true)
		var errs []error
		if err := kb.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: close database in %s: %w", kb.name, kb.dir, err))
		}
		if err := os.RemoveAll(kb.dir); err != nil {
			errs = append(errs, fmt.Errorf("%s: remove %s: %w", kb.name, kb.dir, err))
		}
		os.Remove(filepath.Dir(kb.dir)) // fails, harmlessly, while other subtasks use it
		kb.release()
		kb.closeErr = errors.Join(errs...)
	})
	return kb.closeErr
}

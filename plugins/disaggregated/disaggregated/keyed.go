package disaggregated

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

// keyed is the keyed state backend of one operator subtask: one goleveldb database on a
// store.
type keyed struct {
	params sdk.KeyedBackendParams
	name   string // for errors: job/operator/subtask
	cfg    config
	remote Remote
	cache  *cache
	jobDir string

	// dir, db and st are the database; an in-place Restore replaces them, before any
	// other call but Snapshot of the empty database.
	dir   string
	db    *goleveldb.DB
	st    *store
	batch *goleveldb.Batch // reused by Write, which one goroutine calls at a time

	closeOnce sync.Once
	closed    atomic.Bool
	closeErr  error
}

// open opens the database in a new directory: empty, or laid out from l (a restore in
// place).
func (kb *keyed) open(l *layout) error {
	p := kb.params
	id := fmt.Sprintf("%s-%d-%s", pathElem(p.OperatorID), p.Subtask, randomSuffix())
	dir := filepath.Join(kb.jobDir, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	db, st, err := openDB(dir, kb.remote, kb.cache, pathElem(p.JobID)+"/"+id+"/", l, kb.cfg, false)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	kb.dir, kb.db, kb.st = dir, db, st
	return nil
}

// openDB opens a database in dir on a store over remote and c whose new tables are named
// prefix<number>.ldb, laying out l's files first when l is not nil.
func openDB(dir string, remote Remote, c *cache, prefix string, l *layout, cfg config, readOnly bool) (*goleveldb.DB, *store, error) {
	var restored []tableInfo
	if l != nil {
		restored = l.tables
		if err := l.writeLocal(dir); err != nil {
			return nil, nil, err
		}
	}
	st, err := newStore(dir, remote, c, prefix, restored)
	if err != nil {
		return nil, nil, err
	}
	if l != nil {
		if err := st.SetMeta(l.manifestFd()); err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("restore manifest in %s: %w", dir, err)
		}
	}
	db, err := goleveldb.Open(st, dbOptions(cfg, readOnly))
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("open database in %s: %w", dir, storageCause(err))
	}
	return db, st, nil
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
			return nil, fmt.Errorf("%s: get in %s: %w", kb.name, kb.dir, storageCause(err))
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
		return fmt.Errorf("%s: write %d mutations in %s: %w", kb.name, len(mutations), kb.dir, storageCause(err))
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
		return nil, fmt.Errorf("%s: scan in %s: %w", kb.name, kb.dir, storageCause(err))
	}
	return out, nil
}

// NotifyCheckpointComplete hands the tables the checkpoint's snapshot lists to the
// checkpoint (see the package doc).
func (kb *keyed) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	if err := kb.st.resolve(checkpointID, true); err != nil {
		return fmt.Errorf("%s: checkpoint %d complete: %w", kb.name, checkpointID, err)
	}
	return nil
}

// NotifyCheckpointAborted ends the checkpoint's pin of its tables, deleting those nothing
// else uses.
func (kb *keyed) NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	if err := kb.st.resolve(checkpointID, false); err != nil {
		return fmt.Errorf("%s: checkpoint %d aborted: %w", kb.name, checkpointID, err)
	}
	return nil
}

// Close closes the database, deletes the remote tables only it used, and removes its
// directory (and the job's directory when it is left empty).
func (kb *keyed) Close() error {
	kb.closeOnce.Do(func() {
		kb.closed.Store(true)
		kb.closeErr = kb.closeDB()
		os.Remove(kb.jobDir) // fails, harmlessly, while other subtasks use it
	})
	return kb.closeErr
}

// closeDB closes the database and its store and removes its directory.
func (kb *keyed) closeDB() error {
	var errs []error
	if err := kb.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("%s: close database in %s: %w", kb.name, kb.dir, err))
	}
	if err := kb.st.Close(); err != nil {
		errs = append(errs, fmt.Errorf("%s: close storage of %s: %w", kb.name, kb.dir, err))
	}
	if err := os.RemoveAll(kb.dir); err != nil {
		errs = append(errs, fmt.Errorf("%s: remove %s: %w", kb.name, kb.dir, err))
	}
	return errors.Join(errs...)
}

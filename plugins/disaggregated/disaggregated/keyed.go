package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

// keyed is the keyed state backend of one operator subtask: its parts, each a goleveldb
// database on a store, which together hold its key groups.
type keyed struct {
	params sdk.KeyedBackendParams
	name   string // for errors: job/operator/subtask
	cfg    config
	remote Remote
	b      *Backend // for the remote stores of restored tables
	cache  *cache
	jobDir string

	// parts hold the key groups, by increasing range. A Restore replaces them, before
	// any other call but Snapshot of the empty database.
	parts   []*part
	batches []*goleveldb.Batch // one per part, reused by Write, which one goroutine calls at a time

	closeOnce sync.Once
	closed    atomic.Bool
	closeErr  error
}

// setParts makes ps the backend's parts.
func (kb *keyed) setParts(ps []*part) {
	kb.parts = ps
	kb.batches = make([]*goleveldb.Batch, len(ps))
	for i := range ps {
		kb.batches[i] = new(goleveldb.Batch)
	}
}

// dirs names the parts' directories, for errors.
func (kb *keyed) dirs() string {
	if len(kb.parts) == 1 {
		return kb.parts[0].dir
	}
	var out []string
	for _, p := range kb.parts {
		out = append(out, p.dir)
	}
	return strings.Join(out, ", ")
}

func (kb *keyed) check() error {
	if kb.closed.Load() {
		return fmt.Errorf("%s (%s): %w", kb.name, kb.dirs(), errClosed)
	}
	return nil
}

// Get reads many keys, one point lookup each in the part holding its key group (bloom
// filters skip the tables without it). A key of no part's key groups is absent.
func (kb *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	values := make([][]byte, len(keys))
	for i, k := range keys {
		p := kb.parts[0]
		if len(kb.parts) > 1 {
			if p = kb.partOf(sdk.KeyGroupOf(k)); p == nil {
				continue
			}
		}
		v, err := p.db.Get(k, nil)
		switch {
		case err == nil:
			if v == nil {
				v = []byte{}
			}
			values[i] = v // goleveldb returns a copy
		case errors.Is(err, goleveldb.ErrNotFound):
		default:
			return nil, fmt.Errorf("%s: get in %s: %w", kb.name, p.dir, storageCause(err))
		}
	}
	return values, nil
}

// Write applies mutations in order, as one atomic batch per part.
func (kb *keyed) Write(ctx context.Context, mutations []sdk.Mutation) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, b := range kb.batches {
		b.Reset()
	}
	for _, mu := range mutations {
		i := 0
		if len(kb.parts) > 1 {
			if i = kb.partIndex(sdk.KeyGroupOf(mu.Key)); i < 0 {
				return fmt.Errorf("%s: write key of key group %d, outside its key groups %s: %w", kb.name, sdk.KeyGroupOf(mu.Key), kb.params.KeyGroups, sdk.ErrInvalidArgument)
			}
		}
		if mu.Delete {
			kb.batches[i].Delete(mu.Key)
		} else {
			kb.batches[i].Put(mu.Key, mu.Value)
		}
	}
	for i, b := range kb.batches {
		if b.Len() == 0 {
			continue
		}
		if err := kb.parts[i].db.Write(b, nil); err != nil {
			return fmt.Errorf("%s: write %d mutations in %s: %w", kb.name, b.Len(), kb.parts[i].dir, storageCause(err))
		}
	}
	return nil
}

// partIndex returns the index of the part holding key group g, -1 when none does.
func (kb *keyed) partIndex(g int) int {
	for i, p := range kb.parts {
		if p.kgs.Contains(g) {
			return i
		}
	}
	return -1
}

// Scan returns up to limit pairs in [start, end) in key order, copied: the parts' pairs
// within their key groups, part after part.
func (kb *keyed) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultPageSize
	}
	var out []sdk.KV
	var arena []byte
	for _, p := range kb.parts {
		lo, hi, ok := p.clamp(start, end)
		if !ok {
			continue
		}
		it := p.db.NewIterator(&util.Range{Start: lo, Limit: hi}, nil)
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
		err := it.Error()
		it.Release()
		if err != nil {
			return nil, fmt.Errorf("%s: scan in %s: %w", kb.name, p.dir, storageCause(err))
		}
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// NotifyCheckpointComplete hands the tables the checkpoint's snapshot lists to the
// checkpoint (see the package doc).
func (kb *keyed) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	return kb.resolve(checkpointID, true)
}

// resolve ends checkpoint id's pins in every part.
func (kb *keyed) resolve(id int64, completed bool) error {
	what := "aborted"
	if completed {
		what = "complete"
	}
	var errs []error
	for _, p := range kb.parts {
		if err := p.st.resolve(id, completed); err != nil {
			errs = append(errs, fmt.Errorf("%s: checkpoint %d %s: %w", kb.name, id, what, err))
		}
	}
	return errors.Join(errs...)
}

// NotifyCheckpointAborted ends the checkpoint's pin of its tables, deleting those nothing
// else uses.
func (kb *keyed) NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error {
	if err := kb.check(); err != nil {
		return err
	}
	return kb.resolve(checkpointID, false)
}

// Close closes the databases, deletes the remote tables only they used, and removes their
// directories (and the job's directory when it is left empty).
func (kb *keyed) Close() error {
	kb.closeOnce.Do(func() {
		kb.closed.Store(true)
		kb.closeErr = kb.closeParts()
		os.Remove(kb.jobDir) // fails, harmlessly, while other subtasks use it
	})
	return kb.closeErr
}

// closeParts closes every part.
func (kb *keyed) closeParts() error {
	var errs []error
	for _, p := range kb.parts {
		errs = append(errs, p.close(kb.name))
	}
	return errors.Join(errs...)
}

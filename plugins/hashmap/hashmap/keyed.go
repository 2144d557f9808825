package hashmap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/flowstate/flowstate/sdk"
)

// defaultPageSize is the number of pairs Scan returns when its limit is <= 0.
const defaultPageSize = 1024

// errClosed is returned by calls on a closed keyed backend.
var errClosed = errors.New("keyed backend is closed")

// keyed is the keyed state backend of one operator subtask.
//
// Get, Write, Scan, Snapshot, Restore and Close come from one goroutine at a time; only
// Snapshot.Write and Snapshot.Release run concurrently with them, and those only read the
// maps. Get and Scan therefore read without locks, and shard mutexes order writers against
// the snapshots' bookkeeping and serialization.
type keyed struct {
	params sdk.KeyedBackendParams
	name   string // for errors: job/operator/subtask
	layout layout
	shards []shard

	closed atomic.Bool
}

func newKeyed(p sdk.KeyedBackendParams) *keyed {
	kb := &keyed{
		params: p,
		name:   fmt.Sprintf("hashmap keyed backend %s/%s subtask %d", p.JobID, p.OperatorID, p.Subtask),
		layout: newLayout(p.KeyGroups),
	}
	kb.shards = make([]shard, kb.layout.n)
	for i := range kb.shards {
		kb.shards[i].m = make(map[string][]byte)
	}
	return kb
}

func (kb *keyed) check() error {
	if kb.closed.Load() {
		return fmt.Errorf("%s: %w", kb.name, errClosed)
	}
	return nil
}

// Get reads many keys. The values returned are copies, all in one allocation.
func (kb *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	values := make([][]byte, len(keys))
	total := 0
	for i, k := range keys {
		if v, ok := kb.shards[kb.layout.shardOf(k)].m[string(k)]; ok {
			values[i] = v
			total += len(v)
		}
	}
	arena := make([]byte, 0, total)
	for i, v := range values {
		if v != nil {
			n := len(arena)
			arena = append(arena, v...)
			values[i] = arena[n:len(arena):len(arena)]
		}
	}
	return values, nil
}

// Write applies mutations in order. Values are copied.
//
// A value the backend holds is its own (Get, Scan and snapshots copy values out), so a new
// value of the same length replaces the old one's bytes in place while no pending snapshot
// still needs the shard's old values: no allocation, and no map assignment, for the
// common update of a key whose value keeps its size (a counter, a sum).
func (kb *keyed) Write(ctx context.Context, mutations []sdk.Mutation) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, mu := range mutations {
		i := kb.layout.shardOf(mu.Key)
		sh := &kb.shards[i]
		sh.mu.Lock()
		if !mu.Delete && len(sh.active) == 0 {
			if old, ok := sh.m[string(mu.Key)]; ok && len(old) == len(mu.Value) {
				copy(old, mu.Value)
				sh.mu.Unlock()
				continue
			}
		}
		m := sh.writable(i, mu.Key)
		if mu.Delete {
			delete(m, string(mu.Key))
		} else {
			v := make([]byte, len(mu.Value)) // never nil: present values are non-nil
			copy(v, mu.Value)
			m[string(mu.Key)] = v
		}
		sh.mu.Unlock()
	}
	return nil
}

// Scan returns up to limit pairs in [start, end) in key order, copied.
func (kb *keyed) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: scan: %w", kb.name, err)
	}
	if limit <= 0 {
		limit = defaultPageSize
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil, nil
	}
	found := kb.smallest(start, end, limit)
	total := 0
	for _, e := range found {
		total += len(e.k) + len(e.v)
	}
	arena := make([]byte, 0, total)
	out := make([]sdk.KV, len(found))
	for i, e := range found {
		n := len(arena)
		arena = append(arena, e.k...)
		out[i].Key = arena[n:len(arena):len(arena)]
		n = len(arena)
		arena = append(arena, e.v...)
		out[i].Value = arena[n:len(arena):len(arena)]
	}
	return out, nil
}

// NotifyCheckpointComplete does nothing: full snapshots keep no state between checkpoints.
func (kb *keyed) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	return kb.check()
}

// NotifyCheckpointAborted does nothing: the runner releases the aborted snapshot.
func (kb *keyed) NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error {
	return kb.check()
}

// Close drops the state. Pending snapshots that have not pinned all their shards fail.
func (kb *keyed) Close() error {
	if kb.closed.Swap(true) {
		return nil
	}
	for i := range kb.shards {
		sh := &kb.shards[i]
		sh.mu.Lock()
		sh.m = map[string][]byte{}
		sh.mu.Unlock()
	}
	return nil
}

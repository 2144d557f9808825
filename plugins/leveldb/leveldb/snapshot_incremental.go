package leveldb

import (
	"context"
	"errors"
	"fmt"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// writeIncremental writes an incremental checkpoint as s.plan says: a new base, or one
// delta referencing the files of the last completed checkpoint. It records the resulting
// chain, which becomes the base of later deltas once the checkpoint completes.
func (s *snapshot) writeIncremental(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	kb := s.kb
	var c *chain
	var keys int64
	var err error
	if s.plan.base == nil {
		c, keys, err = s.writeBase(ctx, streams)
	} else {
		c, keys, err = s.writeDelta(ctx, streams)
	}
	if err != nil {
		return nil, err
	}
	kb.tracker.written(s.id, c)
	return []sdk.KeyedStateHandle{c.handle(kb.params.KeyGroups, s.id, keys)}, nil
}

// writeBase uploads every pair of the snapshot as a new base in a shared stream.
func (s *snapshot) writeBase(ctx context.Context, streams sdk.CheckpointStreamFactory) (*chain, int64, error) {
	kb := s.kb
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: snapshot %d: open base stream: %w", kb.name, s.id, err)
	}
	n, err := s.serialize(ctx, kvstream.NewWriter(out))
	if err != nil {
		out.Close()
		return nil, 0, err
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: snapshot %d: close base stream: %w", kb.name, s.id, err)
	}
	return &chain{baseID: s.id, base: sdk.NamedStateHandle{Name: baseFile, Handle: h}}, n, nil
}

// writeDelta uploads the frozen keys, read from the snapshot, as one delta in a shared
// stream. With no key written since the last completed checkpoint it uploads nothing and
// references that checkpoint's files alone.
func (s *snapshot) writeDelta(ctx context.Context, streams sdk.CheckpointStreamFactory) (*chain, int64, error) {
	kb := s.kb
	keys := union(s.plan.keys)
	if len(keys) == 0 {
		return s.plan.base, 0, nil
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: snapshot %d: open delta stream: %w", kb.name, s.id, err)
	}
	if err := s.serializeDelta(ctx, keys, kvstream.NewWriter(out)); err != nil {
		out.Close()
		return nil, 0, err
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: snapshot %d: close delta stream: %w", kb.name, s.id, err)
	}
	return s.plan.base.withDelta(h), int64(len(keys)), nil
}

// serializeDelta writes a put or a tombstone for each of keys (sorted) as of the snapshot,
// and closes w.
func (s *snapshot) serializeDelta(ctx context.Context, keys []string, w *kvstream.Writer) error {
	kb := s.kb
	if err := kb.check(); err != nil {
		return fmt.Errorf("snapshot %d: %w", s.id, err)
	}
	ro := &opt.ReadOptions{DontFillCache: true}
	var buf []byte
	for i, k := range keys {
		v, err := s.snap.Get([]byte(k), ro)
		switch {
		case err == nil:
			buf = append(append(buf[:0], opPut), v...)
		case errors.Is(err, goleveldb.ErrNotFound):
			buf = append(buf[:0], opDelete)
		default:
			return fmt.Errorf("%s: snapshot %d: read key %x in %s: %w", kb.name, s.id, k, kb.dir, err)
		}
		if err := w.Write([]byte(k), buf); err != nil {
			return fmt.Errorf("%s: snapshot %d: delta: %w", kb.name, s.id, err)
		}
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: snapshot %d: delta: %w", kb.name, s.id, err)
	}
	return nil
}

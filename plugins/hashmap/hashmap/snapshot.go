package hashmap

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// snapshotFile is the name of the one stream of a hashmap snapshot.
const snapshotFile = "state"

// snapshot is a pending copy-on-write snapshot of a keyed backend. Its view of a shard it
// has not serialized yet is the shard's live map, except for the keys in its undo log for
// that shard, whose values at snapshot time the log holds.
type snapshot struct {
	kb   *keyed
	id   int64
	undo []map[string]preimage // per shard; guarded by the shard's mutex

	mu       sync.Mutex // held by Write, so that Release waits for it
	written  bool
	released bool
}

// Snapshot freezes the state as of now: it registers the snapshot with every shard (one
// uncontended lock per shard), whatever the state's size. Writes that follow save the
// previous values of the keys they change until Snapshot.Write has serialized their shard.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	s := &snapshot{kb: kb, id: opts.CheckpointID, undo: make([]map[string]preimage, len(kb.shards))}
	for i := range kb.shards {
		sh := &kb.shards[i]
		sh.mu.Lock()
		sh.active = append(sh.active, s)
		sh.mu.Unlock()
	}
	return s, nil
}

// Write serializes the snapshot into one exclusive stream in the canonical format, shard by
// shard, while the keyed backend goes on processing.
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	kb := s.kb
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written || s.released {
		return nil, fmt.Errorf("%s: snapshot %d: Write after Write or Release: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	s.written = true
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: open stream: %w", kb.name, s.id, err)
	}
	entries, err := s.serialize(ctx, out)
	if err != nil {
		out.Close()
		return nil, err
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: close stream: %w", kb.name, s.id, err)
	}
	return []sdk.KeyedStateHandle{{
		KeyGroups: kb.params.KeyGroups,
		Format:    sdk.FormatCanonical,
		Files:     []sdk.NamedStateHandle{{Name: snapshotFile, Handle: h}},
		Meta:      encodeMeta(handleMeta{Entries: entries}),
	}}, nil
}

// spool collects the bytes of one shard in memory, so that the shard's lock is not held
// while the stream (perhaps a network upload) takes them.
type spool struct{ b []byte }

func (s *spool) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }

// serialize writes every shard's view to out and returns the number of entries written.
func (s *snapshot) serialize(ctx context.Context, out sdk.CheckpointStateOutputStream) (uint64, error) {
	kb := s.kb
	sp := &spool{}
	w := kvstream.NewWriter(sp)
	for i := range kb.shards {
		if err := s.serializeShard(i, w); err != nil {
			return 0, err
		}
		if len(sp.b) > 0 {
			if _, err := out.Write(sp.b); err != nil {
				return 0, fmt.Errorf("%s: snapshot %d: write stream: %w", kb.name, s.id, err)
			}
			sp.b = sp.b[:0]
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
	}
	if _, err := out.Write(sp.b); err != nil {
		return 0, fmt.Errorf("%s: snapshot %d: write stream: %w", kb.name, s.id, err)
	}
	return w.Count(), nil
}

// serializeShard writes the snapshot's view of shard i to w under the shard's lock, then
// retires the snapshot from the shard.
func (s *snapshot) serializeShard(i int, w *kvstream.Writer) error {
	kb := s.kb
	sh := &kb.shards[i]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if kb.closed.Load() {
		return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, errClosed)
	}
	undo := s.undo[i]
	for k, v := range sh.m {
		if _, changed := undo[k]; changed {
			continue
		}
		// The writer only reads the key, so it may alias the map's key string.
		if err := w.Write(unsafe.Slice(unsafe.StringData(k), len(k)), v); err != nil {
			return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
	}
	for k, p := range undo {
		if !p.present {
			continue
		}
		if err := w.Write(unsafe.Slice(unsafe.StringData(k), len(k)), p.v); err != nil {
			return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
	}
	s.undo[i] = nil
	sh.active = slices.DeleteFunc(sh.active, func(o *snapshot) bool { return o == s })
	return nil
}

// Release drops the snapshot's undo logs and retires it from the shards it has not
// serialized; it waits for a Write in progress.
func (s *snapshot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.released = true
	for i := range s.kb.shards {
		sh := &s.kb.shards[i]
		sh.mu.Lock()
		sh.active = slices.DeleteFunc(sh.active, func(o *snapshot) bool { return o == s })
		s.undo[i] = nil
		sh.mu.Unlock()
	}
}

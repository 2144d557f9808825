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

// snapshot is a pending copy-on-write snapshot of a keyed backend.
type snapshot struct {
	kb     *keyed
	id     int64
	epoch  uint64
	tables []*table // a shard's view once pinned; guarded by kb.mu

	once     sync.Once
	writing  sync.Mutex // held by Write, so that Release waits for it
	released bool       // guarded by kb.mu
	written  bool       // Write was called; guarded by writing
}

// Snapshot freezes the state as of now. It only opens a new snapshot epoch (one allocation
// of a slot per shard): shards are handed to the snapshot when they are next written or when
// Snapshot.Write reaches them.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	s := &snapshot{kb: kb, id: opts.CheckpointID, tables: make([]*table, len(kb.shards))}
	kb.mu.Lock()
	s.epoch = kb.epoch.Add(1)
	kb.pending = append(kb.pending, s)
	kb.mu.Unlock()
	return s, nil
}

// Write serializes the snapshot into one exclusive stream in the canonical format, shard by
// shard, while the keyed backend goes on processing.
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	kb := s.kb
	s.writing.Lock()
	defer s.writing.Unlock()
	if s.written {
		return nil, fmt.Errorf("%s: snapshot %d: Write called twice: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	s.written = true
	kb.mu.Lock()
	released := s.released
	kb.mu.Unlock()
	if released {
		return nil, fmt.Errorf("%s: snapshot %d: Write after Release: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: open stream: %w", kb.name, s.id, err)
	}
	if err := s.serialize(ctx, kvstream.NewWriter(out)); err != nil {
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
	}}, nil
}

// serialize writes every shard's view to w and closes w.
func (s *snapshot) serialize(ctx context.Context, w *kvstream.Writer) error {
	kb := s.kb
	for i := range kb.shards {
		t, err := s.pin(i)
		if err != nil {
			return err
		}
		for k, v := range t.m {
			// The writer only reads the key, so it may alias the map's key string.
			if err := w.Write(unsafe.Slice(unsafe.StringData(k), len(k)), v); err != nil {
				return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
	}
	return nil
}

// pin returns the snapshot's view of shard i, pinning the shard's current table if no write
// has reached the shard since the snapshot was taken.
func (s *snapshot) pin(i int) (*table, error) {
	kb := s.kb
	sh := &kb.shards[i]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	kb.mu.Lock()
	released := s.released
	var t *table
	if !released {
		t = s.tables[i]
	}
	kb.mu.Unlock()
	if released {
		return nil, fmt.Errorf("%s: snapshot %d: released during Write: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	if t != nil {
		return t, nil
	}
	if kb.closed.Load() {
		return nil, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, errClosed)
	}
	kb.pinLocked(i, sh)
	kb.mu.Lock()
	defer kb.mu.Unlock()
	return s.tables[i], nil
}

// Release drops the snapshot's views, so that later writes to their shards need no clone.
// It waits for a Write in progress.
func (s *snapshot) Release() {
	s.once.Do(func() {
		s.writing.Lock()
		defer s.writing.Unlock()
		kb := s.kb
		kb.mu.Lock()
		s.released = true
		if i := slices.Index(kb.pending, s); i >= 0 {
			kb.pending = slices.Delete(kb.pending, i, i+1)
		}
		tables := s.tables
		s.tables = nil
		kb.mu.Unlock()
		for i, t := range tables {
			if t == nil {
				continue
			}
			sh := &kb.shards[i]
			sh.mu.Lock()
			t.refs--
			sh.mu.Unlock()
		}
	})
}

package leveldb

import (
	"context"
	"fmt"
	"sync"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// snapshotFile is the name of the one stream of a leveldb snapshot.
const snapshotFile = "state"

// snapshot is a goleveldb snapshot waiting to be written.
type snapshot struct {
	kb   *keyed
	id   int64
	snap *goleveldb.Snapshot
	// incremental says the snapshot is an incremental checkpoint, written as plan says.
	incremental bool
	plan        plan

	mu       sync.Mutex // held by Write, so that Release waits for it
	written  bool
	released bool
}

// Snapshot takes a database snapshot: cheap and constant-time, it pins the current sequence
// number so that later writes do not show. With incremental checkpoints it also freezes the
// set of keys written since the last completed checkpoint (see FormatIncremental); a Full
// snapshot is a new base that references no earlier file.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	snap, err := kb.db.GetSnapshot()
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d of %s: %w", kb.name, opts.CheckpointID, kb.dir, err)
	}
	s := &snapshot{kb: kb, id: opts.CheckpointID, snap: snap}
	if kb.tracker != nil && !opts.Savepoint {
		s.incremental, s.plan = true, kb.tracker.snapshot(opts.CheckpointID, opts.Full)
	}
	return s, nil
}

// Write uploads the snapshot: for a savepoint or without incremental checkpoints, every
// pair in key order into one exclusive canonical stream; for an incremental checkpoint, a
// new base or one new delta in a shared stream (see FormatIncremental).
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	kb := s.kb
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written || s.released {
		return nil, fmt.Errorf("%s: snapshot %d: Write after Write or Release: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	s.written = true
	if s.incremental {
		return s.writeIncremental(ctx, streams)
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: open stream: %w", kb.name, s.id, err)
	}
	if _, err := s.serialize(ctx, kvstream.NewWriter(out)); err != nil {
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

// serialize copies every pair of the snapshot to w and closes w; it returns the number of
// pairs.
func (s *snapshot) serialize(ctx context.Context, w *kvstream.Writer) (int64, error) {
	kb := s.kb
	if err := kb.check(); err != nil {
		return 0, fmt.Errorf("snapshot %d: %w", s.id, err)
	}
	it := s.snap.NewIterator(nil, &opt.ReadOptions{DontFillCache: true})
	defer it.Release()
	var n int64
	for it.Next() {
		if err := w.Write(it.Key(), it.Value()); err != nil {
			return 0, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
			}
		}
	}
	if err := it.Error(); err != nil {
		return 0, fmt.Errorf("%s: snapshot %d: read %s: %w", kb.name, s.id, kb.dir, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
	}
	return n, nil
}

// Release releases the database snapshot, waiting for a Write in progress.
func (s *snapshot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.released {
		s.released = true
		s.snap.Release()
	}
}

package disaggregated

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// savepointFile is the name of the one stream of a savepoint.
const savepointFile = "state"

// snapshot is a snapshot waiting to be written: for a checkpoint the cut of the database
// and its pinned tables, for a savepoint a goleveldb snapshot.
type snapshot struct {
	kb   *keyed
	st   *store // the store whose tables are pinned
	id   int64
	full bool

	l    *layout             // a checkpoint
	snap *goleveldb.Snapshot // a savepoint

	mu       sync.Mutex // held by Write, so that Release waits for it
	written  bool
	released bool
}

// Snapshot freezes the state. For a checkpoint it cuts the database: it copies the
// manifest up to its last whole record and the journals (the memtables), and pins the
// remote tables, all while goleveldb writes no manifest record (store.takeCut), so quickly
// and without a flush. For a savepoint it takes a goleveldb snapshot, written as a
// canonical stream.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	s := &snapshot{kb: kb, st: kb.st, id: opts.CheckpointID, full: opts.Full}
	if opts.Savepoint {
		snap, err := kb.db.GetSnapshot()
		if err != nil {
			return nil, fmt.Errorf("%s: savepoint %d of %s: %w", kb.name, opts.CheckpointID, kb.dir, err)
		}
		s.snap = snap
		return s, nil
	}
	l, err := kb.st.takeCut(opts.CheckpointID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kb.name, err)
	}
	s.l = l
	return s, nil
}

// Write writes the snapshot: a checkpoint's layout into one exclusive stream (no table is
// copied; a Full checkpoint first copies the tables this backend does not own, see the
// package doc), a savepoint's pairs into one exclusive canonical stream.
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	kb := s.kb
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written || s.released {
		return nil, fmt.Errorf("%s: snapshot %d: Write after Write or Release: %w", kb.name, s.id, sdk.ErrInvalidArgument)
	}
	s.written = true
	if err := kb.check(); err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", s.id, err)
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: open stream: %w", kb.name, s.id, err)
	}
	defer out.Close()
	h := sdk.KeyedStateHandle{KeyGroups: kb.params.KeyGroups}
	if s.snap != nil {
		h.Format, h.Files = sdk.FormatCanonical, []sdk.NamedStateHandle{{Name: savepointFile}}
		err = s.serialize(ctx, kvstream.NewWriter(out))
	} else {
		if s.full {
			if err := s.st.adopt(ctx, s.id, s.l.tables); err != nil {
				return nil, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
			}
		}
		h.Format, h.Files = FormatDisaggregated, []sdk.NamedStateHandle{{Name: layoutFile}}
		var bytes int64
		for _, t := range s.l.tables {
			bytes += t.Size
		}
		h.Meta, _ = json.Marshal(map[string]any{"checkpoint": s.id, "tables": len(s.l.tables), "table_bytes": bytes, "remote": s.l.remote})
		if err = s.l.write(kvstream.NewWriter(out)); err != nil {
			err = fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if h.Files[0].Handle, err = out.CloseAndGetHandle(ctx); err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: close stream: %w", kb.name, s.id, err)
	}
	return []sdk.KeyedStateHandle{h}, nil
}

// serialize copies every pair of the savepoint to w and closes w.
func (s *snapshot) serialize(ctx context.Context, w *kvstream.Writer) error {
	kb := s.kb
	it := s.snap.NewIterator(nil, &opt.ReadOptions{DontFillCache: true})
	defer it.Release()
	var n int64
	for it.Next() {
		if err := w.Write(it.Key(), it.Value()); err != nil {
			return fmt.Errorf("%s: savepoint %d: %w", kb.name, s.id, err)
		}
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: savepoint %d: %w", kb.name, s.id, err)
			}
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("%s: savepoint %d: read %s: %w", kb.name, s.id, kb.dir, storageCause(err))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: savepoint %d: %w", kb.name, s.id, err)
	}
	return nil
}

// Release frees the snapshot, waiting for a Write in progress. A checkpoint never written
// gives its tables' pins back; a written one keeps them until the checkpoint completes or
// is aborted.
func (s *snapshot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.released = true
	if s.snap != nil {
		s.snap.Release()
	} else if !s.written {
		s.st.resolve(s.id, false) // a failed deletion leaves an unused table: never a loss
	}
}

package disaggregated

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// savepointFile is the name of the one stream of a savepoint.
const savepointFile = "state"

// snapshot is a snapshot waiting to be written: for a checkpoint the cut of each part's
// database and its pinned tables, for a savepoint a goleveldb snapshot of each part.
type snapshot struct {
	kb    *keyed
	parts []*part // the parts at the snapshot, in order
	id    int64
	full  bool

	cuts  []*layout             // a checkpoint: one per part
	snaps []*goleveldb.Snapshot // a savepoint: one per part

	mu       sync.Mutex // held by Write, so that Release waits for it
	written  bool
	released bool
}

// Snapshot freezes the state. For a checkpoint it cuts each part's database: it copies the
// manifest up to its last whole record and the journals (the memtables), and pins the
// tables, all while goleveldb writes no manifest record (store.takeCut), so quickly and
// without a flush. For a savepoint it takes a goleveldb snapshot of each part, written as
// one canonical stream.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	s := &snapshot{kb: kb, parts: kb.parts, id: opts.CheckpointID, full: opts.Full}
	for _, p := range s.parts {
		if opts.Savepoint {
			snap, err := p.db.GetSnapshot()
			if err != nil {
				s.Release()
				return nil, fmt.Errorf("%s: savepoint %d of %s: %w", kb.name, opts.CheckpointID, p.dir, err)
			}
			s.snaps = append(s.snaps, snap)
			continue
		}
		l, err := p.st.takeCut(opts.CheckpointID)
		if err != nil {
			s.Release()
			return nil, fmt.Errorf("%s: %w", kb.name, err)
		}
		s.cuts = append(s.cuts, l)
	}
	return s, nil
}

// Write writes the snapshot: for a checkpoint one handle per part, each an exclusive
// layout stream and a shared file per table, the table adopted in place when streams take
// files over and copied otherwise (a Full checkpoint first copies the tables the part does
// not own, see the package doc); for a savepoint the pairs of every part in one exclusive
// canonical stream.
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
	if s.snaps != nil {
		h, err := s.writeSavepoint(ctx, streams)
		if err != nil {
			return nil, err
		}
		return []sdk.KeyedStateHandle{h}, nil
	}
	out := make([]sdk.KeyedStateHandle, len(s.parts))
	for i, p := range s.parts {
		h, err := s.writeCut(ctx, streams, p, s.cuts[i])
		if err != nil {
			return nil, fmt.Errorf("%s: snapshot %d: %w", kb.name, s.id, err)
		}
		out[i] = h
	}
	return out, nil
}

// writeCut writes the handle of part p's cut l.
func (s *snapshot) writeCut(ctx context.Context, streams sdk.CheckpointStreamFactory, p *part, l *layout) (sdk.KeyedStateHandle, error) {
	if err := p.st.ownTables(ctx, l, s.full); err != nil {
		return sdk.KeyedStateHandle{}, err
	}
	tables, err := p.st.tableHandles(ctx, s.id, l, streams, s.full)
	if err != nil {
		return sdk.KeyedStateHandle{}, err
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return sdk.KeyedStateHandle{}, fmt.Errorf("open stream: %w", err)
	}
	defer out.Close()
	if err := l.write(kvstream.NewWriter(out)); err != nil {
		return sdk.KeyedStateHandle{}, err
	}
	lh, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return sdk.KeyedStateHandle{}, fmt.Errorf("close stream: %w", err)
	}
	var bytes int64
	for _, t := range l.tables {
		bytes += t.Size
	}
	h := sdk.KeyedStateHandle{KeyGroups: p.kgs, Format: FormatDisaggregated,
		Files: append([]sdk.NamedStateHandle{{Name: layoutFile, Handle: lh}}, tables...)}
	h.Meta, _ = json.Marshal(map[string]any{"checkpoint": s.id, "tables": len(l.tables), "table_bytes": bytes, "remote": l.remote})
	return h, nil
}

// writeSavepoint writes the pairs of every part, within its key groups, to one canonical
// stream.
func (s *snapshot) writeSavepoint(ctx context.Context, streams sdk.CheckpointStreamFactory) (sdk.KeyedStateHandle, error) {
	kb := s.kb
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return sdk.KeyedStateHandle{}, fmt.Errorf("%s: snapshot %d: open stream: %w", kb.name, s.id, err)
	}
	defer out.Close()
	if err := s.serialize(ctx, kvstream.NewWriter(out)); err != nil {
		return sdk.KeyedStateHandle{}, err
	}
	h := sdk.KeyedStateHandle{KeyGroups: kb.params.KeyGroups, Format: sdk.FormatCanonical, Files: []sdk.NamedStateHandle{{Name: savepointFile}}}
	if h.Files[0].Handle, err = out.CloseAndGetHandle(ctx); err != nil {
		return sdk.KeyedStateHandle{}, fmt.Errorf("%s: snapshot %d: close stream: %w", kb.name, s.id, err)
	}
	return h, nil
}

// serialize copies every pair of the savepoint to w and closes w.
func (s *snapshot) serialize(ctx context.Context, w *kvstream.Writer) error {
	kb := s.kb
	var n int64
	for i, p := range s.parts {
		lo, hi, _ := p.clamp(nil, nil)
		it := s.snaps[i].NewIterator(&util.Range{Start: lo, Limit: hi}, &opt.ReadOptions{DontFillCache: true})
		for it.Next() {
			if err := w.Write(it.Key(), it.Value()); err != nil {
				it.Release()
				return fmt.Errorf("%s: savepoint %d: %w", kb.name, s.id, err)
			}
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					it.Release()
					return fmt.Errorf("%s: savepoint %d: %w", kb.name, s.id, err)
				}
			}
		}
		err := it.Error()
		it.Release()
		if err != nil {
			return fmt.Errorf("%s: savepoint %d: read %s: %w", kb.name, s.id, p.dir, storageCause(err))
		}
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
	for _, snap := range s.snaps {
		snap.Release()
	}
	if !s.written {
		for i := range s.cuts {
			s.parts[i].st.resolve(s.id, false) // a failed deletion leaves an unused table: never a loss
		}
	}
}

package boltstate

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// snapshotFileName names the one stream of a snapshot in its handle.
const snapshotFileName = "state.kv"

// snapshotBatch bounds the records Snapshot.Write copies out of the frozen view at a time.
const snapshotBatch = 4096

// Snapshot opens a read-only transaction: bbolt's view of the state as of now, which later
// writes do not change. It takes microseconds whatever the state's size.
func (kb *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.closed {
		return nil, fmt.Errorf("%s: snapshot %d: keyed backend is closed", kb.name, opts.CheckpointID)
	}
	tx, err := kb.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %d: %w", kb.name, opts.CheckpointID, err)
	}
	s := &snapshot{kb: kb, opts: opts, tx: tx}
	kb.snaps[s] = struct{}{}
	return s, nil
}

// snapshot is a frozen view: an open read transaction.
type snapshot struct {
	kb   *keyed
	opts sdk.SnapshotOptions

	mu      sync.Mutex
	tx      *bolt.Tx // nil once released or aborted by Close
	written bool
}

// Write streams the frozen view in the canonical format, as one exclusive stream (for
// checkpoints and savepoints alike: every snapshot is full and self-contained).
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	what := fmt.Sprintf("%s: write snapshot %d", s.kb.name, s.opts.CheckpointID)
	s.mu.Lock()
	if s.tx == nil || s.written {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: the snapshot was released, closed or already written", what)
	}
	s.written = true
	s.mu.Unlock()
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, fmt.Errorf("%s: open stream: %w", what, err)
	}
	if err := s.copyTo(ctx, kvstream.NewWriter(out)); err != nil {
		out.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: close stream: %w", what, err)
	}
	return []sdk.KeyedStateHandle{{
		KeyGroups: s.kb.params.KeyGroups,
		Format:    sdk.FormatCanonical,
		Files:     []sdk.NamedStateHandle{{Name: snapshotFileName, Handle: h}},
	}}, nil
}

// copyTo writes every pair of the view to w and closes w. It reads the view in batches
// under the snapshot's lock and writes them outside it, so that Close can end the view
// between batches.
func (s *snapshot) copyTo(ctx context.Context, w *kvstream.Writer) error {
	var (
		next  []byte // first key of the next batch; nil: from the start
		batch []sdk.KV
	)
	for first := true; first || next != nil; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = batch[:0]
		s.mu.Lock()
		if s.tx == nil {
			s.mu.Unlock()
			return fmt.Errorf("the keyed backend was closed during the snapshot")
		}
		c := s.tx.Bucket(bucketKV).Cursor()
		k, v := c.First()
		if next != nil {
			k, v = c.Seek(next)
		}
		next = nil
		for ; k != nil; k, v = c.Next() {
			if len(batch) == snapshotBatch {
				next = bytes.Clone(k)
				break
			}
			batch = append(batch, sdk.KV{Key: bytes.Clone(k), Value: bytes.Clone(v)})
		}
		s.mu.Unlock()
		for _, kv := range batch {
			if err := w.Write(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// Release ends the read transaction.
func (s *snapshot) Release() {
	s.abort()
	s.kb.mu.Lock()
	delete(s.kb.snaps, s)
	s.kb.mu.Unlock()
}

// abort ends the read transaction, if it is still open.
func (s *snapshot) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil {
		if err := s.tx.Rollback(); err != nil {
			sdk.Logger().Warn("ending a snapshot's read transaction", "backend", s.kb.name, "checkpoint", s.opts.CheckpointID, "error", err)
		}
		s.tx = nil
	}
}

package hashmap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// Restore loads the canonical snapshots in handles, keeping the keys of the backend's own
// key groups: restoring the snapshots of other parallelisms is how a job rescales. Handles
// of any other format fail with an error wrapping sdk.ErrUnsupported.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical {
			return fmt.Errorf("%s: restore: snapshot format %q: the hashmap state backend restores only %q: %w", kb.name, h.Format, sdk.FormatCanonical, sdk.ErrUnsupported)
		}
	}
	kb.presize(handles)
	for _, h := range handles {
		if !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		for _, f := range h.Files {
			if err := kb.restoreFile(ctx, f, state); err != nil {
				return err
			}
		}
	}
	return nil
}

// presize gives the maps of an empty keyed backend room for the entries the handles hold in
// its key groups, as far as their Meta says (hashmap snapshots record their entry count;
// a handle's entries are taken as spread evenly over its key groups), so that a restore
// does not grow them step by step.
func (kb *keyed) presize(handles []sdk.KeyedStateHandle) {
	for i := range kb.shards {
		if len(kb.shards[i].m) > 0 {
			return
		}
	}
	own := kb.params.KeyGroups
	var entries float64
	for _, h := range handles {
		m, ok := decodeMeta(h.Meta)
		lo, hi := max(h.KeyGroups.Start, own.Start), min(h.KeyGroups.End, own.End)
		if !ok || hi <= lo {
			continue
		}
		entries += float64(m.Entries) * float64(hi-lo) / float64(h.KeyGroups.End-h.KeyGroups.Start)
	}
	per := int(entries/float64(len(kb.shards))*1.1) + 1 // shards differ by a few percent
	if per < 64 {
		return
	}
	for i := range kb.shards {
		sh := &kb.shards[i]
		sh.mu.Lock()
		sh.m = make(map[string][]byte, per)
		sh.mu.Unlock()
	}
}

// handleMeta is the Meta of a hashmap snapshot's handle, a small JSON object.
type handleMeta struct {
	// Entries is the number of entries the snapshot holds.
	Entries uint64 `json:"entries"`
}

func encodeMeta(m handleMeta) []byte {
	b, _ := json.Marshal(m) // cannot fail
	return b
}

// decodeMeta reads the Meta of a handle hashmap wrote; handles of other backends may carry
// none or something else.
func decodeMeta(b []byte) (handleMeta, bool) {
	var m handleMeta
	if len(b) == 0 || json.Unmarshal(b, &m) != nil {
		return handleMeta{}, false
	}
	return m, true
}

// restoreChunk is the size of the chunks a restore reads state into. The values restored
// point into them, so a chunk stays in memory until every value restored into it was
// overwritten or deleted; the bytes of the values overwritten meanwhile are the cost, at
// most the size of the state restored.
const restoreChunk = 4 << 20

// restoreFile loads one canonical stream.
func (kb *keyed) restoreFile(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	// Values stay in the chunks the reader reads into: no allocation and no copy per entry.
	r := kvstream.NewChunkedReader(rc, int(min(restoreChunk, max(f.Handle.Size, int64(len(f.Handle.Inline))))))
	own := kb.params.KeyGroups
	for n := 0; ; n++ {
		k, v, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: restore %q: %w", kb.name, f.Name, err)
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: restore %q: %w", kb.name, f.Name, err)
			}
		}
		if !own.Contains(sdk.KeyGroupOf(k)) {
			continue
		}
		i := kb.layout.shardOf(k)
		sh := &kb.shards[i]
		sh.mu.Lock()
		sh.writable(i, k)[string(k)] = v
		sh.mu.Unlock()
	}
}

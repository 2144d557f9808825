package leveldb

import (
	"context"
	"fmt"
	"io"

	goleveldb "github.com/syndtr/goleveldb/leveldb"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// restoreBatchBytes is how many bytes of records Restore gathers in a batch before writing
// it.
const restoreBatchBytes = 4 << 20

// Restore loads the snapshots in handles, canonical (sdk.FormatCanonical) or incremental
// (FormatIncremental: the base, then each delta in order), keeping the keys of the
// backend's own key groups: restoring the snapshots of other parallelisms is how a job
// rescales. Handles of any other format fail with an error wrapping sdk.ErrUnsupported.
//
// With incremental checkpoints, a restore from one incremental handle of exactly the
// backend's key groups continues its chain: the next checkpoint uploads one delta and
// references the restored files. Otherwise the next checkpoint writes a new base.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	chains := make([]*chain, len(handles))
	for i, h := range handles {
		switch h.Format {
		case sdk.FormatCanonical:
		case FormatIncremental:
			c, err := parseChain(h)
			if err != nil {
				return fmt.Errorf("%s: restore: %w", kb.name, err)
			}
			chains[i] = c
		default:
			return fmt.Errorf("%s: restore: snapshot format %q: the leveldb state backend restores only %q and %q: %w", kb.name, h.Format, sdk.FormatCanonical, FormatIncremental, sdk.ErrUnsupported)
		}
	}
	b := new(goleveldb.Batch)
	for _, h := range handles {
		if !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		for _, f := range h.Files {
			delta := h.Format == FormatIncremental && f.Name != baseFile
			if err := kb.restoreFile(ctx, f, delta, state, b); err != nil {
				return err
			}
		}
	}
	if kb.tracker != nil {
		var c *chain
		if len(handles) == 1 && chains[0] != nil && handles[0].KeyGroups == kb.params.KeyGroups {
			c = chains[0]
		}
		kb.tracker.restored(c)
	}
	return nil
}

// restoreFile loads one canonical stream, or one delta of an incremental chain, through
// batch b.
func (kb *keyed) restoreFile(ctx context.Context, f sdk.NamedStateHandle, delta bool, state sdk.StateReader, b *goleveldb.Batch) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	own := kb.params.KeyGroups
	b.Reset()
	size := 0
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		if err := kb.db.Write(b, nil); err != nil {
			return fmt.Errorf("%s: restore %q into %s: %w", kb.name, f.Name, kb.dir, err)
		}
		b.Reset()
		size = 0
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: restore %q: %w", kb.name, f.Name, err)
		}
		return nil
	}
	for {
		k, v, err := r.NextView()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return fmt.Errorf("%s: restore %q: %w", kb.name, f.Name, err)
		}
		if !own.Contains(sdk.KeyGroupOf(k)) {
			continue
		}
		switch {
		case !delta:
			b.Put(k, v) // copies
		case len(v) > 0 && v[0] == opPut:
			b.Put(k, v[1:])
		case len(v) == 1 && v[0] == opDelete:
			b.Delete(k)
		default:
			return fmt.Errorf("%s: restore %q: key %x: value does not start with a put or delete operation: %w", kb.name, f.Name, k, sdk.ErrCorrupt)
		}
		if size += len(k) + len(v); size >= restoreBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

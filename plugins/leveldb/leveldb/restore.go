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

// Restore loads the canonical snapshots in handles, keeping the keys of the backend's own
// key groups: restoring the snapshots of other parallelisms is how a job rescales. Handles
// of any other format fail with an error wrapping sdk.ErrUnsupported.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical {
			return fmt.Errorf("%s: restore: snapshot format %q: the leveldb state backend restores only %q: %w", kb.name, h.Format, sdk.FormatCanonical, sdk.ErrUnsupported)
		}
	}
	b := new(goleveldb.Batch)
	for _, h := range handles {
		if !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		for _, f := range h.Files {
			if err := kb.restoreFile(ctx, f, state, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// restoreFile loads one canonical stream through batch b.
func (kb *keyed) restoreFile(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader, b *goleveldb.Batch) error {
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
		b.Put(k, v) // copies
		if size += len(k) + len(v); size >= restoreBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

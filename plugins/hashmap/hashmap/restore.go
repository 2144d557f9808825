package hashmap

import (
	"context"
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

// restoreFile loads one canonical stream.
func (kb *keyed) restoreFile(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	own := kb.params.KeyGroups
	for n := 0; ; n++ {
		k, v, err := r.NextView()
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
		val := make([]byte, len(v))
		copy(val, v)
		sh.writable(i, k)[string(k)] = val
		sh.mu.Unlock()
	}
}

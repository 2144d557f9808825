package boltstate

import (
	"context"
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// restoreBatch is the number of pairs Restore writes per transaction.
const restoreBatch = 10000

// Restore loads canonical snapshots (from this or any other backend), keeping the keys of
// the backend's own key groups: restoring the snapshots of another parallelism rescales.
// Other formats fail with an error wrapping sdk.ErrUnsupported.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical {
			return fmt.Errorf("%s: restore: snapshot format %q: boltdb restores only %q: %w", kb.name, h.Format, sdk.FormatCanonical, sdk.ErrUnsupported)
		}
	}
	for _, h := range handles {
		if !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		for _, f := range h.Files {
			if err := kb.restoreFile(ctx, f, state); err != nil {
				return fmt.Errorf("%s: restore %q (key groups %s): %w", kb.name, f.Name, h.KeyGroups, err)
			}
		}
	}
	return nil
}

// restoreFile loads one canonical stream in batches of restoreBatch pairs.
func (kb *keyed) restoreFile(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	own := kb.params.KeyGroups
	batch := make([]sdk.KV, 0, restoreBatch)
	for {
		k, v, err := r.Next()
		if err != nil && err != io.EOF {
			return err
		}
		if err == nil && own.Contains(sdk.KeyGroupOf(k)) {
			batch = append(batch, sdk.KV{Key: k, Value: v})
		}
		if len(batch) == restoreBatch || (err == io.EOF && len(batch) > 0) {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if werr := kb.put(batch); werr != nil {
				return werr
			}
			batch = batch[:0]
		}
		if err == io.EOF {
			return nil
		}
	}
}

// put writes pairs in one transaction.
func (kb *keyed) put(kvs []sdk.KV) error {
	return kb.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		for _, kv := range kvs {
			if err := b.Put(kv.Key, kv.Value); err != nil {
				return fmt.Errorf("put key %x: %w", kv.Key, err)
			}
		}
		return nil
	})
}

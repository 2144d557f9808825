package disaggregated

import (
	"context"
	"fmt"
	"io"
	"os"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// restoreBatchBytes is how many bytes of records Restore gathers in a batch before writing
// it.
const restoreBatchBytes = 4 << 20

// Restore loads the snapshots in handles, keeping the keys of the backend's own key groups.
// One FormatDisaggregated handle of exactly the backend's key groups, on the backend's own
// remote store, is opened in place: its manifest and journals are laid out locally, its
// tables stay where they are and are read through the cache. Any other handle,
// FormatDisaggregated (another key group range: a rescale) or sdk.FormatCanonical, is
// read into the database, the former by opening it read-only in a scratch directory.
// Handles of any other format fail with an error wrapping sdk.ErrUnsupported.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical && h.Format != FormatDisaggregated {
			return fmt.Errorf("%s: restore: snapshot format %q: the disaggregated state backend restores only %q and %q: %w", kb.name, h.Format, sdk.FormatCanonical, FormatDisaggregated, sdk.ErrUnsupported)
		}
		if h.Format == FormatDisaggregated && len(h.Files) != 1 {
			return fmt.Errorf("%s: restore: a %s handle of %d files, want 1: %w", kb.name, h.Format, len(h.Files), sdk.ErrCorrupt)
		}
	}
	layouts := make([]*layout, len(handles))
	for i, h := range handles {
		if h.Format != FormatDisaggregated || !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		l, err := kb.readLayout(ctx, h.Files[0], state)
		if err != nil {
			return err
		}
		layouts[i] = l
	}
	if len(handles) == 1 && layouts[0] != nil && handles[0].KeyGroups == kb.params.KeyGroups && layouts[0].remote == kb.remote.String() {
		return kb.restoreInPlace(layouts[0])
	}
	b := new(goleveldb.Batch)
	for i, h := range handles {
		if !h.KeyGroups.Intersects(kb.params.KeyGroups) {
			continue
		}
		if layouts[i] != nil {
			err := kb.copyFrom(ctx, layouts[i], b)
			if err != nil {
				return err
			}
			continue
		}
		for _, f := range h.Files {
			if err := kb.restoreCanonical(ctx, f, state, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// readLayout reads the layout stream of a FormatDisaggregated handle.
func (kb *keyed) readLayout(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader) (*layout, error) {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return nil, fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	l, err := readLayout(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: restore: %q: %w", kb.name, f.Name, err)
	}
	return l, nil
}

// restoreInPlace replaces the (empty) database with one opened from l, its tables in place.
// Every table must be on the remote store with the size the layout says, or the restore
// fails naming it: a checkpoint missing a table is refused before anything reads it.
func (kb *keyed) restoreInPlace(l *layout) error {
	if err := checkTables(kb.remote, l); err != nil {
		return fmt.Errorf("%s: restore: %w", kb.name, err)
	}
	if err := kb.closeDB(); err != nil {
		return err
	}
	if err := kb.open(l); err != nil {
		return fmt.Errorf("%s: restore in place: %w", kb.name, err)
	}
	return nil
}

// checkTables checks that every table of l is on remote with its size.
func checkTables(remote Remote, l *layout) error {
	for _, t := range l.tables {
		n, err := remote.Size(context.Background(), t.Object)
		if err != nil {
			return fmt.Errorf("table %s of the checkpoint: %w", t.Object, err)
		}
		if n != t.Size {
			return fmt.Errorf("table %s in %s has %d bytes, the checkpoint says %d: %w", t.Object, remote, n, t.Size, sdk.ErrCorrupt)
		}
	}
	return nil
}

// copyFrom opens l read-only in a scratch directory (its tables on its remote store,
// through the cache) and writes the pairs of the backend's key groups into the database.
func (kb *keyed) copyFrom(ctx context.Context, l *layout, b *goleveldb.Batch) error {
	remote := kb.remote
	if l.remote != remote.String() {
		r, err := openRemote(ctx, l.remote, kb.cfg.s3)
		if err != nil {
			return fmt.Errorf("%s: restore: remote store %s of the checkpoint: %w", kb.name, l.remote, err)
		}
		remote = r
	}
	if err := checkTables(remote, l); err != nil {
		return fmt.Errorf("%s: restore: %w", kb.name, err)
	}
	scratch, err := os.MkdirTemp(kb.jobDir, "restore-")
	if err != nil {
		return fmt.Errorf("%s: restore: %w", kb.name, err)
	}
	defer os.RemoveAll(scratch)
	db, st, err := openDB(scratch, remote, kb.cache, "", l, kb.cfg, true)
	if err != nil {
		return fmt.Errorf("%s: restore: %w", kb.name, err)
	}
	defer st.Close()
	defer db.Close()
	own := kb.params.KeyGroups
	it := db.NewIterator(nil, &opt.ReadOptions{DontFillCache: true})
	defer it.Release()
	return kb.load(ctx, "checkpoint in "+l.remote, b, func() ([]byte, []byte, error) {
		for it.Next() {
			if own.Contains(sdk.KeyGroupOf(it.Key())) {
				return it.Key(), it.Value(), nil
			}
		}
		if err := it.Error(); err != nil {
			return nil, nil, storageCause(err)
		}
		return nil, nil, io.EOF
	})
}

// restoreCanonical loads the pairs of the backend's key groups of one canonical stream.
func (kb *keyed) restoreCanonical(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader, b *goleveldb.Batch) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	own := kb.params.KeyGroups
	return kb.load(ctx, fmt.Sprintf("%q", f.Name), b, func() ([]byte, []byte, error) {
		for {
			k, v, err := r.NextView()
			if err != nil || own.Contains(sdk.KeyGroupOf(k)) {
				return k, v, err
			}
		}
	})
}

// load writes the pairs next returns (until io.EOF) into the database through batch b.
func (kb *keyed) load(ctx context.Context, what string, b *goleveldb.Batch, next func() ([]byte, []byte, error)) error {
	b.Reset()
	size := 0
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		if err := kb.db.Write(b, nil); err != nil {
			return fmt.Errorf("%s: restore %s into %s: %w", kb.name, what, kb.dir, storageCause(err))
		}
		b.Reset()
		size = 0
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: restore %s: %w", kb.name, what, err)
		}
		return nil
	}
	for {
		k, v, err := next()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return fmt.Errorf("%s: restore %s: %w", kb.name, what, err)
		}
		b.Put(k, v) // copies
		if size += len(k) + len(v); size >= restoreBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

package disaggregated

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	goleveldb "github.com/syndtr/goleveldb/leveldb"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// restoreBatchBytes is how many bytes of records Restore gathers in a batch before writing
// it.
const restoreBatchBytes = 4 << 20

// checkParallelism is how many tables Restore checks on their stores at a time.
const checkParallelism = 16

// Restore loads the snapshots in handles, keeping the keys of the backend's own key groups.
// Every FormatDisaggregated handle whose key groups meet the backend's is opened in place,
// as a part for those key groups: its manifest and journals are laid out locally, its
// tables stay where they are and are read through the cache (a table its checkpoint holds
// as a copy is first written back to the backend's remote store). So a restore at another
// parallelism (other key groups) rewrites nothing either: each part reads only its own key
// groups. The key groups no such handle holds get a part of their own, an empty database,
// into which sdk.FormatCanonical handles are read. Handles of any other format fail with
// an error wrapping sdk.ErrUnsupported.
func (kb *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	if err := kb.check(); err != nil {
		return err
	}
	own := kb.params.KeyGroups
	var inPlace []sdk.KeyedStateHandle
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical && h.Format != FormatDisaggregated {
			return fmt.Errorf("%s: restore: snapshot format %q: the disaggregated state backend restores only %q and %q: %w", kb.name, h.Format, sdk.FormatCanonical, FormatDisaggregated, sdk.ErrUnsupported)
		}
		if h.Format == FormatDisaggregated && h.KeyGroups.Intersects(own) {
			inPlace = append(inPlace, h)
		}
	}
	slices.SortFunc(inPlace, func(a, b sdk.KeyedStateHandle) int { return a.KeyGroups.Start - b.KeyGroups.Start })
	var parts []*part
	fail := func(err error) error {
		for _, p := range parts {
			p.close(kb.name)
		}
		return err
	}
	next := own.Start // the first key group no part holds yet
	for i, h := range inPlace {
		kgs := sdk.KeyGroupRange{Start: max(h.KeyGroups.Start, own.Start), End: min(h.KeyGroups.End, own.End)}
		if i > 0 && kgs.Start < next {
			return fail(fmt.Errorf("%s: restore: handles of key groups %s and %s overlap: %w", kb.name, inPlace[i-1].KeyGroups, h.KeyGroups, sdk.ErrInvalidArgument))
		}
		if kgs.Start > next {
			p, err := kb.openPart(sdk.KeyGroupRange{Start: next, End: kgs.Start}, nil, nil)
			if err != nil {
				return fail(fmt.Errorf("%s: restore: %w", kb.name, err))
			}
			parts = append(parts, p)
		}
		p, err := kb.restorePart(ctx, kgs, h, state)
		if err != nil {
			return fail(err)
		}
		parts = append(parts, p)
		next = kgs.End
	}
	if next < own.End {
		p, err := kb.openPart(sdk.KeyGroupRange{Start: next, End: own.End}, nil, nil)
		if err != nil {
			return fail(fmt.Errorf("%s: restore: %w", kb.name, err))
		}
		parts = append(parts, p)
	}
	if err := kb.closeParts(); err != nil {
		return fail(err)
	}
	kb.setParts(parts)
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical || !h.KeyGroups.Intersects(own) {
			continue
		}
		for _, f := range h.Files {
			if err := kb.restoreCanonical(ctx, f, state); err != nil {
				return err
			}
		}
	}
	return nil
}

// restorePart opens handle h in place as the part of key groups kgs.
func (kb *keyed) restorePart(ctx context.Context, kgs sdk.KeyGroupRange, h sdk.KeyedStateHandle, state sdk.StateReader) (*part, error) {
	files := map[string]sdk.StreamStateHandle{}
	var layoutHandle *sdk.NamedStateHandle
	for i, f := range h.Files {
		files[f.Name] = f.Handle
		if f.Name == layoutFile {
			layoutHandle = &h.Files[i]
		}
	}
	if layoutHandle == nil {
		return nil, fmt.Errorf("%s: restore: a %s handle of key groups %s without its %q file: %w", kb.name, h.Format, h.KeyGroups, layoutFile, sdk.ErrCorrupt)
	}
	l, err := kb.readLayout(ctx, *layoutHandle, state)
	if err != nil {
		return nil, err
	}
	if err := kb.checkTables(ctx, l, files); err != nil {
		return nil, fmt.Errorf("%s: restore: %w", kb.name, err)
	}
	restored := func(st *store) ([]*table, error) {
		var out []*table
		for _, ti := range l.tables {
			if !ti.Copied {
				out = append(out, &table{num: ti.Num, remote: ti.remote, object: ti.Object, size: ti.Size, crc: ti.CRC,
					handle: files[ti.File], handleDone: true})
				continue
			}
			t, err := st.materialize(ctx, ti, files[ti.File], state)
			if err != nil {
				return out, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	p, err := kb.openPart(kgs, l, restored)
	if err != nil {
		return nil, fmt.Errorf("%s: restore in place: %w", kb.name, err)
	}
	return p, nil
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

// checkTables resolves the store of every table of l and checks that the table is there
// with the size the layout says (a table held as a copy: that the handle has its copy), so
// that a checkpoint missing a table is refused, naming it, before anything reads it. It
// checks up to checkParallelism tables at a time.
func (kb *keyed) checkTables(ctx context.Context, l *layout, files map[string]sdk.StreamStateHandle) error {
	for i := range l.tables {
		ti := &l.tables[i]
		uri := l.remote
		if ti.Remote != "" {
			uri = ti.Remote
		}
		r, err := kb.b.remoteFor(ctx, kb.remote, uri)
		if err != nil {
			return fmt.Errorf("remote store %s of table %s: %w", uri, ti.Object, err)
		}
		ti.remote = r
		if ti.Copied {
			if h, ok := files[ti.File]; !ok || h.Size != ti.Size {
				return fmt.Errorf("table %s: the checkpoint's copy %q is missing or not of %d bytes: %w", ti.Object, ti.File, ti.Size, sdk.ErrCorrupt)
			}
		}
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		todo  = make(chan tableInfo)
	)
	for range min(checkParallelism, len(l.tables)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ti := range todo {
				mu.Lock()
				failed := first != nil
				mu.Unlock()
				if failed {
					continue // one missing table refuses the checkpoint
				}
				n, err := ti.remote.Size(ctx, ti.Object)
				if err == nil && n != ti.Size {
					err = fmt.Errorf("table %s in %s has %d bytes, the checkpoint says %d: %w", ti.Object, ti.remote, n, ti.Size, sdk.ErrCorrupt)
				} else if err != nil {
					err = fmt.Errorf("table %s of the checkpoint: %w", ti.Object, err)
				}
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, ti := range l.tables {
		if !ti.Copied {
			todo <- ti
		}
	}
	close(todo)
	wg.Wait()
	return first
}

// restoreCanonical loads the pairs of the backend's key groups of one canonical stream
// into the parts that hold them.
func (kb *keyed) restoreCanonical(ctx context.Context, f sdk.NamedStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, f.Handle)
	if err != nil {
		return fmt.Errorf("%s: restore: open %q: %w", kb.name, f.Name, err)
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	what := fmt.Sprintf("%q", f.Name)
	batches := make([]*goleveldb.Batch, len(kb.parts))
	sizes := make([]int, len(kb.parts))
	for i := range batches {
		batches[i] = new(goleveldb.Batch)
	}
	flush := func(i int) error {
		if batches[i].Len() == 0 {
			return nil
		}
		if err := kb.parts[i].db.Write(batches[i], nil); err != nil {
			return fmt.Errorf("%s: restore %s into %s: %w", kb.name, what, kb.parts[i].dir, storageCause(err))
		}
		batches[i].Reset()
		sizes[i] = 0
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: restore %s: %w", kb.name, what, err)
		}
		return nil
	}
	for {
		k, v, err := r.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: restore %s: %w", kb.name, what, err)
		}
		i := kb.partIndex(sdk.KeyGroupOf(k))
		if i < 0 {
			continue // not the backend's key group
		}
		batches[i].Put(k, v) // copies
		if sizes[i] += len(k) + len(v); sizes[i] >= restoreBatchBytes {
			if err := flush(i); err != nil {
				return err
			}
		}
	}
	for i := range batches {
		if err := flush(i); err != nil {
			return err
		}
	}
	return nil
}

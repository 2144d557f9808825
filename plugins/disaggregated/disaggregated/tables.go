package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
)

// table is one table file of a database: an object on a remote store (the database's own
// for the tables it wrote; the one a restored checkpoint names for the tables it restored),
// and who uses it (the ownership rules of the package doc).
type table struct {
	num    int64
	remote Remote
	object string // its name on remote
	size   int64
	crc    uint32 // CRC-32C of its bytes
	// owned says this database created the object (or a restore copied it there); a table
	// restored in place belongs to its checkpoint, and the database never deletes it.
	owned bool
	// live says goleveldb has not removed it.
	live bool
	// pending are the checkpoints whose snapshots list it and that are neither complete
	// nor aborted; the value says the listing references the object in place (an adopted
	// handle) rather than a copy of its bytes.
	pending map[int64]bool
	// checkpointed says a completed checkpoint references the object in place: from then
	// on the runner's shared-state registry owns it, and the live database only uses it.
	checkpointed bool
	// handle is the shared handle the newest listing gave it: the storage's handle of the
	// object adopted in place, or, when copied, of a copy of its bytes. handleFrom is the
	// checkpoint that made it (0: the restored checkpoint's), and handleDone says that
	// checkpoint completed (always, for a restored one). A copy is referenced again only
	// once done: the runner discards the uploads of a failed checkpoint, but never adopted
	// files of a checkpoint that has not completed.
	handle     sdk.StreamStateHandle
	handleFrom int64
	handleDone bool
	copied     bool
}

// info returns what a snapshot lists of t.
func (t *table) info() tableInfo {
	i := tableInfo{Num: t.num, Object: t.object, Size: t.size, CRC: t.crc, remote: t.remote}
	return i
}

// handleName is the name, in a checkpoint's handle, of the shared file of table num.
func handleName(num int64) string { return "table/" + strconv.FormatInt(num, 10) }

// unusedLocked returns t (and forgets it) when it may be deleted now: this store created it
// and neither the live database, nor a pending snapshot, nor a completed checkpoint
// referencing it in place uses it; s.mu is held. A table nothing uses that the store did
// not create is only forgotten.
func (s *store) unusedLocked(t *table) []*table {
	if t.live || t.checkpointed || len(t.pending) > 0 {
		return nil
	}
	delete(s.tables, t.num)
	if !t.owned {
		return nil
	}
	return []*table{t}
}

// resolve ends checkpoint id's pending use of the tables: when it completed, those it
// referenced in place are its from now on, and copies it made may be referenced again;
// when it was aborted, the copies it made go (the runner discards them), and the tables
// nothing else uses are deleted.
func (s *store) resolve(id int64, completed bool) error {
	s.mu.Lock()
	var del []*table
	for _, t := range s.tables {
		inPlace, ok := t.pending[id]
		if !ok {
			continue
		}
		delete(t.pending, id)
		switch {
		case completed:
			t.checkpointed = t.checkpointed || inPlace
			t.handleDone = t.handleDone || t.handleFrom == id
		case t.handleFrom == id && t.copied:
			t.handle, t.handleFrom, t.copied = sdk.StreamStateHandle{}, 0, false
		}
		del = append(del, s.unusedLocked(t)...)
	}
	s.mu.Unlock()
	return s.deleteTables(del)
}

// tableHandles gives every table of l (checkpoint id's list) a shared handle and returns
// the files that reference them, named by handleName; l's records learn the names. A table
// with a handle that may be referenced again keeps it (with full, not the restored
// checkpoint's: a Full checkpoint references no stream of the checkpoint it restored).
// The others are adopted in place when streams take files over (sdk.RemoteFileAdopter),
// else copied into shared streams, reading them through the cache.
func (s *store) tableHandles(ctx context.Context, id int64, l *layout, streams sdk.CheckpointStreamFactory, full bool) ([]sdk.NamedStateHandle, error) {
	files := make([]sdk.NamedStateHandle, len(l.tables))
	var need []int
	s.mu.Lock()
	for i := range l.tables {
		ti := &l.tables[i]
		t := s.tables[ti.Num] // pinned by the cut: never forgotten before id resolves
		ti.File = handleName(ti.Num)
		if t.handle.Ref != "" && (!t.copied || t.handleDone) && !(full && t.handleFrom == 0) {
			files[i] = sdk.NamedStateHandle{Name: ti.File, Handle: t.handle}
			ti.Copied, t.pending[id] = t.copied, !t.copied
			continue
		}
		need = append(need, i)
	}
	s.mu.Unlock()
	if len(need) == 0 {
		return files, nil
	}
	if r, ok := streams.(sdk.RemoteFileAdopter); ok {
		uris := make([]sdk.StreamStateHandle, len(need))
		for j, i := range need {
			ti := l.tables[i]
			uris[j] = sdk.StreamStateHandle{Ref: objectURI(ti.remote, ti.Object), Size: ti.Size, Scope: sdk.ScopeShared, Checksum: ti.CRC}
		}
		hs, err := r.AdoptRemoteFiles(ctx, uris)
		switch {
		case err == nil:
			s.mu.Lock()
			for j, i := range need {
				t := s.tables[l.tables[i].Num]
				t.handle, t.handleFrom, t.handleDone, t.copied = hs[j], id, false, false
				t.pending[id] = true
				files[i] = sdk.NamedStateHandle{Name: l.tables[i].File, Handle: hs[j]}
			}
			s.mu.Unlock()
			return files, nil
		case !errors.Is(err, sdk.ErrUnsupported):
			return nil, fmt.Errorf("adopt %d tables: %w", len(need), err)
		}
	}
	for _, i := range need {
		ti := &l.tables[i]
		h, err := s.copyTable(ctx, *ti, streams)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		t := s.tables[ti.Num]
		t.handle, t.handleFrom, t.handleDone, t.copied = h, id, false, true
		s.mu.Unlock()
		ti.Copied = true
		files[i] = sdk.NamedStateHandle{Name: ti.File, Handle: h}
	}
	return files, nil
}

// copyTable writes the bytes of table ti, read through the cache, to a new shared stream
// of streams.
func (s *store) copyTable(ctx context.Context, ti tableInfo, streams sdk.CheckpointStreamFactory) (sdk.StreamStateHandle, error) {
	f, e, err := s.cache.acquire(ctx, ti.remote, ti.Object, ti.Size, ti.CRC)
	if err != nil {
		return sdk.StreamStateHandle{}, fmt.Errorf("copy table %s into the checkpoint: %w", ti.Object, err)
	}
	defer s.cache.release(e)
	defer f.Close()
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	if err != nil {
		return sdk.StreamStateHandle{}, fmt.Errorf("copy table %s into the checkpoint: open stream: %w", ti.Object, err)
	}
	defer out.Close()
	if _, err := io.Copy(out, f); err != nil {
		return sdk.StreamStateHandle{}, fmt.Errorf("copy table %s into the checkpoint: %w", ti.Object, err)
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return sdk.StreamStateHandle{}, fmt.Errorf("copy table %s into the checkpoint: %w", ti.Object, err)
	}
	return h, nil
}

// ownTables makes the tables of l (checkpoint id's list) that this store did not create
// objects of its own: copies, under <prefix>own-<number>.ldb, which the live database and
// l use from then on, with no handle yet. With full every such table is copied, so that a
// Full checkpoint references no object of the checkpoint it restored (a restore in
// NO_CLAIM mode); without, only those that have no handle (restored from a checkpoint that
// listed none), so that every table a checkpoint lists has one.
func (s *store) ownTables(ctx context.Context, l *layout, full bool) error {
	for i := range l.tables {
		ti := &l.tables[i]
		s.mu.Lock()
		t := s.tables[ti.Num]
		foreign := !t.owned && (full || t.handle.Ref == "")
		s.mu.Unlock()
		if !foreign {
			continue
		}
		object, err := s.copyObject(ctx, *ti, fmt.Sprintf("own-%06d", ti.Num))
		if err != nil {
			return err
		}
		s.mu.Lock()
		t.remote, t.object, t.owned = s.remote, object, true
		t.handle, t.handleFrom, t.handleDone, t.copied = sdk.StreamStateHandle{}, 0, false, false
		*ti = t.info()
		s.mu.Unlock()
	}
	return nil
}

// copyObject copies table ti, read through the cache, to a new object of the store named
// after base, and returns its name.
func (s *store) copyObject(ctx context.Context, ti tableInfo, base string) (string, error) {
	f, e, err := s.cache.acquire(ctx, ti.remote, ti.Object, ti.Size, ti.CRC)
	if err != nil {
		return "", fmt.Errorf("copy table %s: %w", ti.Object, err)
	}
	defer s.cache.release(e)
	path := f.Name()
	f.Close()
	return s.upload(ctx, base, path, ti.Size)
}

// materialize makes a table restored from a copy (a checkpoint storage that could not
// adopt it holds its bytes) an object of the store again: it reads the copy through state,
// writes it to the cache directory, checks its size and CRC-32C, uploads it under
// <prefix>restored-<number>.ldb and caches it. The table is the database's; its handle
// stays the copy's.
func (s *store) materialize(ctx context.Context, ti tableInfo, h sdk.StreamStateHandle, state sdk.StateReader) (*table, error) {
	rc, err := state.Open(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("restore table %s from its copy: %w", ti.Object, err)
	}
	defer rc.Close()
	f, err := s.cache.tempFile()
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	crc := newCRC()
	n, err := io.Copy(io.MultiWriter(f, crc), rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != ti.Size || crc.Sum32() != ti.CRC) {
		err = fmt.Errorf("the copy has %d bytes of checksum %08x, the checkpoint lists %d of %08x: %w", n, crc.Sum32(), ti.Size, ti.CRC, sdk.ErrCorrupt)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("restore table %s from its copy: %w", ti.Object, err)
	}
	object, err := s.upload(ctx, fmt.Sprintf("restored-%06d", ti.Num), tmp, ti.Size)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := s.cache.add(s.remote, object, tmp, ti.Size); err != nil {
		return nil, err
	}
	return &table{num: ti.Num, remote: s.remote, object: object, size: ti.Size, crc: ti.CRC, owned: true,
		handle: h, handleDone: true, copied: true}, nil
}

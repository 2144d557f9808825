package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/syndtr/goleveldb/leveldb/storage"

	"github.com/flowstate/flowstate/sdk"
)

// store is the goleveldb storage (storage.Storage) of one database: its journals, manifests
// and CURRENT file stay in a local directory (goleveldb's own file storage), and its table
// files (.ldb, written once and never changed) live on remote stores (the tables it writes
// on its own, uploaded when goleveldb syncs them; restored ones where their checkpoint
// lists them), read through the cache.
//
// It also keeps who uses each remote table (the ownership rules of the package doc, in
// tables.go): the live database, the snapshots written and not yet complete or aborted,
// and the completed checkpoints. It deletes a remote table only when it created it and
// nothing uses it.
type store struct {
	local  storage.Storage // goleveldb's file storage of dir
	dir    string
	remote Remote
	cache  *cache
	// prefix starts the object names of the tables this store creates: unique to the
	// store, so that two databases restored from one checkpoint never write the same name.
	prefix string

	mu     sync.Mutex
	tables map[int64]*table
	closed bool

	// freeze is held by the writers of manifests and journals for each write, and by a
	// snapshot while it copies them, so that the copy is a cut at a record boundary.
	freeze    sync.Mutex
	manifest  storage.FileDesc            // the current manifest (SetMeta)
	synced    map[storage.FileDesc]int64  // manifest bytes up to the last whole record
	written   map[storage.FileDesc]*int64 // journal bytes written
	manifestN map[storage.FileDesc]*int64 // manifest bytes written
}

// newStore returns the store of a database in dir (created) whose new tables go to remote
// as prefix<number>.ldb.
func newStore(dir string, remote Remote, c *cache, prefix string) (*store, error) {
	local, err := storage.OpenFile(dir, false)
	if err != nil {
		return nil, fmt.Errorf("open local directory %s: %w", dir, err)
	}
	return &store{local: local, dir: dir, remote: remote, cache: c, prefix: prefix, tables: map[int64]*table{},
		synced: map[storage.FileDesc]int64{}, written: map[storage.FileDesc]*int64{}, manifestN: map[storage.FileDesc]*int64{}}, nil
}

// addRestored adds the tables of the checkpoint the database restores, before goleveldb
// opens it.
func (s *store) addRestored(tables []*table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tables {
		t.live, t.pending = true, map[int64]bool{}
		s.tables[t.num] = t
	}
}

var _ storage.Storage = (*store)(nil)

func (s *store) Lock() (storage.Locker, error) { return s.local.Lock() }
func (s *store) Log(str string)                { s.local.Log(str) }

func (s *store) SetMeta(fd storage.FileDesc) error {
	s.freeze.Lock()
	defer s.freeze.Unlock()
	if err := s.local.SetMeta(fd); err != nil {
		return err
	}
	s.manifest = fd
	// goleveldb writes a new manifest's first record (the whole version, the comparer's
	// name with it) and flushes it, but syncs it only with the next record: without this,
	// a snapshot taken before that next record copied an empty manifest, which no restore
	// can open ("manifest corrupted (field 'comparer'): missing"). When goleveldb points
	// CURRENT at the manifest, what it wrote is that whole first record.
	if n := s.manifestN[fd]; n != nil {
		s.synced[fd] = max(s.synced[fd], *n)
	}
	return nil
}

func (s *store) GetMeta() (storage.FileDesc, error) { return s.local.GetMeta() }

// List lists local files, and the live tables for storage.TypeTable.
func (s *store) List(ft storage.FileType) ([]storage.FileDesc, error) {
	fds, err := s.local.List(ft &^ storage.TypeTable)
	if err != nil || ft&storage.TypeTable == 0 {
		return fds, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tables {
		if t.live {
			fds = append(fds, storage.FileDesc{Type: storage.TypeTable, Num: t.num})
		}
	}
	return fds, nil
}

// Open opens a local file, or a table through the cache. A table missing on its store, or
// whose bytes are not those written, is an *storage.ErrCorrupted for goleveldb; any other
// failure to fetch it (the store unreachable, the cache's disk full) is a plain error,
// which goleveldb takes as transient: the read fails, a compaction is tried again later,
// and nothing sticks once the store answers again.
func (s *store) Open(fd storage.FileDesc) (storage.Reader, error) {
	if fd.Type != storage.TypeTable {
		return s.local.Open(fd)
	}
	s.mu.Lock()
	t := s.tables[fd.Num]
	var remote Remote
	var info tableInfo
	if t != nil && t.live {
		remote, info = t.remote, t.info()
	}
	s.mu.Unlock()
	if remote == nil {
		return nil, &storage.ErrCorrupted{Fd: fd, Err: fmt.Errorf("open table %s in %s: %w", fd, s.dir, os.ErrNotExist)}
	}
	f, e, err := s.cache.acquire(context.Background(), remote, info.Object, info.Size, info.CRC)
	if err != nil {
		if errors.Is(err, sdk.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) {
			return nil, &storage.ErrCorrupted{Fd: fd, Err: err}
		}
		return nil, err
	}
	return &cachedReader{File: f, release: func() { s.cache.release(e) }}, nil
}

// cachedReader is an open cached table; closing it releases the cache entry.
type cachedReader struct {
	*os.File
	once    sync.Once
	release func()
}

func (r *cachedReader) Close() error {
	err := r.File.Close()
	r.once.Do(r.release)
	return err
}

// Create creates a local file, or a table written to the cache directory and uploaded when
// closed.
func (s *store) Create(fd storage.FileDesc) (storage.Writer, error) {
	switch fd.Type {
	case storage.TypeTable:
		f, err := s.cache.tempFile()
		if err != nil {
			return nil, err
		}
		return &tableWriter{s: s, fd: fd, f: f, crc: newCRC()}, nil
	case storage.TypeManifest, storage.TypeJournal:
		w, err := s.local.Create(fd)
		if err != nil {
			return nil, err
		}
		n := new(int64)
		s.freeze.Lock()
		if fd.Type == storage.TypeJournal {
			s.written[fd] = n
		} else {
			s.synced[fd] = 0
			s.manifestN[fd] = n
		}
		s.freeze.Unlock()
		return &cutWriter{s: s, fd: fd, w: w, n: n}, nil
	default:
		return s.local.Create(fd)
	}
}

// cutWriter writes a manifest or a journal, counting what a snapshot may copy: a journal's
// bytes as they are written (every database write flushes its record whole), a manifest's
// up to its last Sync (goleveldb syncs after each whole record).
type cutWriter struct {
	s  *store
	fd storage.FileDesc
	w  storage.Writer
	n  *int64 // bytes written
}

func (w *cutWriter) Write(p []byte) (int, error) {
	w.s.freeze.Lock()
	defer w.s.freeze.Unlock()
	n, err := w.w.Write(p)
	*w.n += int64(n)
	return n, err
}

// Sync marks a manifest's record boundary. It does not call fsync: working files are not
// durable anyway (snapshots are), as with NoSync.
func (w *cutWriter) Sync() error {
	if w.fd.Type == storage.TypeManifest {
		w.s.freeze.Lock()
		w.s.synced[w.fd] = *w.n
		w.s.freeze.Unlock()
	}
	return nil
}

func (w *cutWriter) Close() error { return w.w.Close() }

// tableWriter writes a new table to a file in the cache directory and, when goleveldb
// syncs it (once, when the table is complete), uploads it to the remote store
// (conditionally: the name is new) and hands the file to the cache. The upload is in Sync,
// not Close, because goleveldb ignores the error of a table's Close but not of its Sync: a
// failed upload then fails the flush or compaction, which goleveldb tries again, instead of
// a version that names a table the store never got.
type tableWriter struct {
	s      *store
	fd     storage.FileDesc
	f      *os.File
	crc    hash32
	size   int64
	synced bool // uploaded and cached
	closed bool // the file is closed
}

// hash32 is the part of hash.Hash32 tableWriter uses.
type hash32 interface {
	io.Writer
	Sum32() uint32
}

func (w *tableWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("write table %s: %w", w.fd, os.ErrClosed)
	}
	n, err := w.f.Write(p)
	w.crc.Write(p[:n])
	w.size += int64(n)
	return n, err
}

// Sync uploads the table and registers it with the store. goleveldb calls it once the
// table is written whole, then closes the writer.
func (w *tableWriter) Sync() error {
	if w.synced {
		return nil
	}
	if w.closed {
		return fmt.Errorf("sync table %s: %w", w.fd, os.ErrClosed)
	}
	s := w.s
	tmp := w.f.Name()
	w.closed = true
	if err := w.f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write table %s: %w", w.fd, err)
	}
	object, err := s.upload(context.Background(), fmt.Sprintf("%06d", w.fd.Num), tmp, w.size)
	if err != nil {
		os.Remove(tmp)
		return err
	}
	w.synced = true
	t := &table{num: w.fd.Num, remote: s.remote, object: object, size: w.size, crc: w.crc.Sum32(), owned: true, live: true, pending: map[int64]bool{}}
	s.mu.Lock()
	s.tables[t.num] = t
	s.mu.Unlock()
	return s.cache.add(s.remote, object, tmp, w.size)
}

// Close removes the file of a table that was never synced (goleveldb dropped it).
func (w *tableWriter) Close() error {
	if !w.closed {
		w.closed = true
		w.f.Close()
		os.Remove(w.f.Name())
	}
	return nil
}

// upload creates a new object of the store, <prefix><base>.ldb, from the file at path, and
// returns its name. A name already taken can only be an upload of this store that failed
// as far as it could tell (goleveldb then writes the table again under the same number):
// the bytes go under a name of their own, <prefix><base>-<random>.ldb.
func (s *store) upload(ctx context.Context, base, path string, size int64) (string, error) {
	object := s.prefix + base + ".ldb"
	for attempt := 0; ; attempt++ {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("upload table %s: %w", object, err)
		}
		err = s.remote.Create(ctx, object, f, size)
		f.Close()
		if err == nil {
			return object, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return "", fmt.Errorf("upload table %s: %w", object, err)
		}
		object = s.prefix + base + "-" + randomSuffix() + ".ldb"
	}
}

// Remove removes a local file, or ends the live database's use of a table.
func (s *store) Remove(fd storage.FileDesc) error {
	if fd.Type != storage.TypeTable {
		s.freeze.Lock()
		delete(s.synced, fd)
		delete(s.written, fd)
		delete(s.manifestN, fd)
		s.freeze.Unlock()
		return s.local.Remove(fd)
	}
	s.mu.Lock()
	t := s.tables[fd.Num]
	if t == nil {
		s.mu.Unlock()
		return nil // a table whose upload failed: its file is gone already
	}
	t.live = false
	del := s.unusedLocked(t)
	s.mu.Unlock()
	return s.deleteTables(del)
}

func (s *store) Rename(oldfd, newfd storage.FileDesc) error {
	if oldfd.Type == storage.TypeTable || newfd.Type == storage.TypeTable {
		return fmt.Errorf("rename %s to %s in %s: tables are never renamed: %w", oldfd, newfd, s.dir, storage.ErrInvalidFile)
	}
	return s.local.Rename(oldfd, newfd)
}

// Close closes the local storage and deletes the remote tables that only the live
// database used.
func (s *store) Close() error {
	s.mu.Lock()
	s.closed = true
	var del []*table
	for _, t := range s.tables {
		t.live = false
		del = append(del, s.unusedLocked(t)...)
	}
	s.mu.Unlock()
	return errors.Join(s.deleteTables(del), s.local.Close())
}

// deleteTables deletes the remote objects of tables and their cached files. It stops at
// the first object its store fails to delete (the store is likely down, and each request
// may take the client's retries): those left stay on the store unused, which never loses
// anything.
func (s *store) deleteTables(tables []*table) error {
	for i, t := range tables {
		s.cache.drop(t.remote, t.object)
		if err := t.remote.Delete(context.Background(), t.object); err != nil {
			return fmt.Errorf("delete unused table %s (%d more left unused on the store): %w", t.object, len(tables)-1-i, err)
		}
	}
	return nil
}

// takeCut copies the manifest and journals while no record is being written to them, and
// pins, for checkpoint id, every live table: a superset of the tables the copied manifest
// references. (A table is registered when goleveldb closes it, before the manifest record
// that adds it; it is removed only after the record that drops it, which the copy then
// holds. goleveldb's own list of the version's tables could lag the manifest by the
// record being committed.) A restore removes the extra tables from its database, never
// from the remote store.
func (s *store) takeCut(id int64) (*layout, error) {
	s.freeze.Lock()
	defer s.freeze.Unlock()
	if s.manifest.Zero() {
		return nil, fmt.Errorf("snapshot %d of %s: no manifest yet", id, s.dir)
	}
	l := &layout{remote: s.remote.String(), manifestNum: s.manifest.Num, journals: map[int64][]byte{}}
	var err error
	if l.manifest, err = readPrefix(filepath.Join(s.dir, s.manifest.String()), s.synced[s.manifest]); err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", id, err)
	}
	for fd, n := range s.written {
		if l.journals[fd.Num], err = readPrefix(filepath.Join(s.dir, fd.String()), *n); err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", id, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tables {
		if t.live {
			t.pending[id] = false
			l.tables = append(l.tables, t.info())
		}
	}
	sort.Slice(l.tables, func(i, j int) bool { return l.tables[i].Num < l.tables[j].Num })
	return l, nil
}

// readPrefix reads the first n bytes of the file at path.
func readPrefix(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// storageCause returns the error a goleveldb error of the storage carries (goleveldb
// reports a failed table open as a *storage.ErrCorrupted, which does not unwrap), so that
// sdk.ErrCorrupt and fs.ErrNotExist show through; other errors come back as they are.
func storageCause(err error) error {
	var ec *storage.ErrCorrupted
	if errors.As(err, &ec) && ec.Err != nil {
		return fmt.Errorf("goleveldb file %s: %w", ec.Fd, ec.Err)
	}
	return err
}

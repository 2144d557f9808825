package disaggregated

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/flowstate/flowstate/sdk"
)

// castagnoli is the CRC-32C table of table files' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newCRC returns a CRC-32C hash of table files' checksums.
func newCRC() hash32 { return crc32.New(castagnoli) }

// cache is the local copy of remote table files, shared by every keyed backend of a
// Backend: whole files, one per object, in one directory, whose total size it keeps at most
// bound. It evicts the least recently used files that no reader holds open; a file held
// open is never evicted, so the directory holds at most bound plus the open files (plus
// the tables being written, which are not in the cache until they are uploaded).
type cache struct {
	dir   string
	bound int64
	lock  *os.File // cacheLock, when the cache is the process's

	mu      sync.Mutex
	entries map[string]*entry // by the object's URI (objectURI)
	idle    *list.List        // of *entry with refs == 0, least recently used first
	total   int64             // bytes of every entry's file
	open    int64             // bytes of entries with refs > 0
	excess  int64             // the most total ever exceeded bound + open (0 when the bound held)
	fetches int64             // objects downloaded, for tests
	fetched int64             // bytes downloaded, for tests
}

// entry is one cached object.
type entry struct {
	key   string // the object's URI
	path  string
	size  int64
	refs  int
	elem  *list.Element // in idle when refs == 0
	ready chan struct{} // closed when the download ended (err says how)
	err   error
	gone  bool // removed from entries: its file goes when the last reader closes
}

// newCache returns a cache in dir (created), bounded by bound bytes.
func newCache(dir string, bound int64) (*cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory %s: %w", dir, err)
	}
	return &cache{dir: dir, bound: bound, entries: map[string]*entry{}, idle: list.New()}, nil
}

// cacheLock is the file in a process's cache directory that the process holds locked
// (flock(2)) while it runs: a cache directory whose lock can be taken is a dead process's.
const cacheLock = "LOCK"

// newProcessCache creates the cache of this process in a new directory cache-<random>
// under localDir, locked, after removing the cache directories of processes that are gone
// (killed, or crashed), so that the bound holds across restarts.
func newProcessCache(localDir string, bound int64) (*cache, error) {
	stale, _ := filepath.Glob(filepath.Join(localDir, "cache-*"))
	for _, d := range stale {
		f, err := os.Open(filepath.Join(d, cacheLock))
		if err != nil {
			continue // not a cache directory, or one being created
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(d)
		}
		f.Close()
	}
	c, err := newCache(filepath.Join(localDir, "cache-"+randomSuffix()), bound)
	if err != nil {
		return nil, err
	}
	lock, err := os.Create(filepath.Join(c.dir, cacheLock))
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		return nil, fmt.Errorf("lock cache directory %s: %w", c.dir, err)
	}
	c.lock = lock // held open, so locked, until the process ends
	return c, nil
}

// objectURI returns the URI of object on remote: the cache's key, and what a checkpoint
// storage adopts.
func objectURI(remote Remote, object string) string { return remote.String() + "/" + object }

// pathOf returns the cache file of the object whose URI is key: a name made of a hash of
// the URI (which may be longer than a file name may be) and the object's base name.
func (c *cache) pathOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:12])+"-"+path.Base(key))
}

// tempFile creates a file in the cache directory for a table being written.
func (c *cache) tempFile() (*os.File, error) {
	f, err := os.CreateTemp(c.dir, ".writing-*")
	if err != nil {
		return nil, fmt.Errorf("create table file in cache directory %s: %w", c.dir, err)
	}
	return f, nil
}

// add moves the file at tmp, the uploaded bytes of object on remote, into the cache,
// unopened.
func (c *cache) add(remote Remote, object, tmp string, size int64) error {
	key := objectURI(remote, object)
	path := c.pathOf(key)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cache table %s: %w", object, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[key]; old != nil { // cannot happen: objects are created once
		c.forgetLocked(old)
	}
	e := &entry{key: key, path: path, size: size, ready: closedChan}
	c.entries[key] = e
	c.total += size
	e.elem = c.idle.PushBack(e)
	c.evictLocked()
	return nil
}

var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// acquire returns the cached file of object, opened, downloading it from remote first when
// it is not cached: its size must be size and its CRC-32C crc, or the error names the
// object and wraps sdk.ErrCorrupt. The caller calls release(e) when it closes the file.
func (c *cache) acquire(ctx context.Context, remote Remote, object string, size int64, crc uint32) (*os.File, *entry, error) {
	key := objectURI(remote, object)
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		e = &entry{key: key, path: c.pathOf(key), size: size, ready: make(chan struct{})}
		c.entries[key] = e
		e.refs = 1
		c.total += size
		c.open += size
		c.fetches++
		c.fetched += size
		c.evictLocked()
		c.mu.Unlock()
		e.err = download(ctx, remote, object, e.path, size, crc)
		close(e.ready)
		if e.err != nil {
			c.release(e)
			return nil, nil, e.err
		}
	} else {
		c.refLocked(e)
		c.mu.Unlock()
		<-e.ready
		if e.err != nil {
			err := e.err
			c.release(e)
			return nil, nil, err
		}
	}
	f, err := os.Open(e.path)
	if err != nil {
		c.release(e)
		return nil, nil, fmt.Errorf("open cached table %s: %w", object, err)
	}
	return f, e, nil
}

// refLocked counts one more reader of e; c.mu is held.
func (c *cache) refLocked(e *entry) {
	if e.refs == 0 {
		c.idle.Remove(e.elem)
		e.elem = nil
		c.open += e.size
	}
	e.refs++
}

// release ends one reader of e. A failed download, or an entry dropped meanwhile, leaves
// the cache with its last reader.
func (c *cache) release(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	c.open -= e.size
	if e.err != nil || e.gone {
		c.forgetLocked(e)
		return
	}
	e.elem = c.idle.PushBack(e)
	c.evictLocked()
}

// drop removes object on remote from the cache (it was deleted there), now or when its
// last reader closes.
func (c *cache) drop(remote Remote, object string) {
	key := objectURI(remote, object)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		if e.refs == 0 {
			c.forgetLocked(e)
		} else {
			e.gone = true
			delete(c.entries, key)
		}
	}
}

// forgetLocked deletes e's file and its accounting; e has no reader; c.mu is held.
func (c *cache) forgetLocked(e *entry) {
	if e.elem != nil {
		c.idle.Remove(e.elem)
		e.elem = nil
	}
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	os.Remove(e.path)
	c.total -= e.size
}

// evictLocked deletes the least recently used idle files until the cache fits its bound
// or only open files are left; c.mu is held.
func (c *cache) evictLocked() {
	for c.total > c.bound && c.idle.Len() > 0 {
		c.forgetLocked(c.idle.Front().Value.(*entry))
	}
	if over := c.total - c.bound - c.open; over > c.excess {
		c.excess = over
	}
}

// download copies object from remote to path, checking its size and CRC-32C.
func download(ctx context.Context, remote Remote, object, path string, size int64, crc uint32) (err error) {
	rc, err := remote.Open(ctx, object)
	if err != nil {
		return fmt.Errorf("fetch table %s from %s: %w", object, remote, err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fetch table %s: %w", object, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("fetch table %s: %w", object, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	h := newCRC()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rc, size+1))
	if err != nil {
		return fmt.Errorf("fetch table %s from %s: %w", object, remote, err)
	}
	if n != size {
		return fmt.Errorf("table %s in %s has %d bytes, want %d: %w", object, remote, n, size, sdk.ErrCorrupt)
	}
	if got := h.Sum32(); got != crc {
		return fmt.Errorf("table %s in %s has checksum %08x, want %08x: %w", object, remote, got, crc, sdk.ErrCorrupt)
	}
	return nil
}

// fetchedBytes, fetchCount, openBytes and excessBytes report the cache's counters (for tests).
func (c *cache) fetchedBytes() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.fetched }
func (c *cache) fetchCount() int64   { c.mu.Lock(); defer c.mu.Unlock(); return c.fetches }
func (c *cache) openBytes() int64    { c.mu.Lock(); defer c.mu.Unlock(); return c.open }
func (c *cache) excessBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.excess
}

package disaggregated

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
)

// testDB opens a database on a store over a file:// remote in t's directories, with a
// cache of bound bytes and tables of about 64 KiB.
func testDB(t *testing.T, bound int64) (*goleveldb.DB, *store, *cache, Remote) {
	t.Helper()
	root := t.TempDir()
	remote, err := openRemote(context.Background(), "file://"+filepath.Join(root, "remote"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCache(filepath.Join(root, "cache"), bound)
	if err != nil {
		t.Fatal(err)
	}
	st, err := newStore(filepath.Join(root, "db"), remote, c, "t/")
	if err != nil {
		t.Fatal(err)
	}
	db, err := goleveldb.Open(st, &opt.Options{WriteBuffer: 64 << 10, CompactionTableSize: 64 << 10, OpenFilesCacheCapacity: -1, BlockCacheCapacity: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, st, c, remote
}

// value is the value of key i, 100 bytes that differ per key.
func value(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%08d|", i)), 12)[:100] }

// dirBytes sums the sizes of the files in dir: the checker of the cache's own accounting.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err == nil && !strings.HasPrefix(e.Name(), ".writing-") {
			n += fi.Size()
		}
	}
	return n
}

// TestCacheBound writes about 2 MiB of tables through a cache bounded at 256 KiB (some
// tables are larger than that) and reads
// every key back twice: the local directory never holds more than the bound plus the open
// files, evicted tables are fetched again, and every value read is the one written.
func TestCacheBound(t *testing.T) {
	const bound = 256 << 10
	db, st, c, remote := testDB(t, bound)
	const n = 20000
	for i := 0; i < n; i++ {
		if err := db.Put([]byte(fmt.Sprintf("key%08d", i)), value(i), nil); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			checkBound(t, c, bound)
		}
	}
	if err := db.CompactRange(utilRangeAll()); err != nil {
		t.Fatal(err)
	}
	objects, err := remote.List(context.Background(), "t/")
	if err != nil || len(objects) < 4 {
		t.Fatalf("remote holds %v (%v), want at least 4 tables", objects, err)
	}
	before := c.fetchCount()
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i += 7 {
			v, err := db.Get([]byte(fmt.Sprintf("key%08d", i)), nil)
			if err != nil || !bytes.Equal(v, value(i)) {
				t.Fatalf("Get key%08d = %q, %v; want %q", i, v, err, value(i))
			}
			if i%700 == 0 {
				checkBound(t, c, bound)
			}
		}
	}
	if c.fetchCount() == before {
		t.Fatalf("no table was fetched again: the cache evicted nothing")
	}
	if c.excessBytes() != 0 {
		t.Fatalf("the cache once held %d bytes above its bound plus its open files", c.excessBytes())
	}
	if local, _ := filepath.Glob(filepath.Join(st.dir, "*.ldb")); len(local) != 0 {
		t.Fatalf("tables in the local database directory: %v", local)
	}
}

// checkBound checks the files in the cache directory against the bound and the bytes of
// the files open.
func checkBound(t *testing.T, c *cache, bound int64) {
	t.Helper()
	open := c.openBytes()
	if got := dirBytes(t, c.dir); got > bound+open {
		t.Fatalf("cache directory holds %d bytes, more than the bound %d plus %d bytes open", got, bound, open)
	}
}

// TestMissingOrCorruptTable: a table missing from the remote store, or changed there, is an
// error of the read that needs it, naming the table's object.
func TestMissingOrCorruptTable(t *testing.T) {
	for _, damage := range []string{"missing", "corrupt", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			db, st, c, remote := testDB(t, 0) // nothing stays cached once closed
			for i := 0; i < 2000; i++ {
				if err := db.Put([]byte(fmt.Sprintf("key%08d", i)), value(i), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.CompactRange(utilRangeAll()); err != nil {
				t.Fatal(err)
			}
			objects, err := remote.List(context.Background(), "t/")
			if err != nil || len(objects) == 0 {
				t.Fatalf("remote holds %v (%v)", objects, err)
			}
			victim := objects[0]
			path := filepath.Join(remote.(*fileRemote).dir, victim)
			switch damage {
			case "missing":
				err = os.Remove(path)
			case "corrupt":
				var b []byte
				if b, err = os.ReadFile(path); err == nil {
					b[len(b)/2] ^= 0xff
					os.Remove(path)
					err = os.WriteFile(path, b, 0o644)
				}
			case "truncated":
				err = os.Truncate(path, 100)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := dirBytes(t, c.dir); n != 0 {
				t.Fatalf("cache holds %d bytes with a bound of 0 and no open file", n)
			}
			var readErr error
			for i := 0; i < 2000 && readErr == nil; i++ {
				_, readErr = db.Get([]byte(fmt.Sprintf("key%08d", i)), nil)
			}
			if readErr == nil || !strings.Contains(readErr.Error(), victim) {
				t.Fatalf("reads with %s %s: %v, want an error naming it", damage, victim, readErr)
			}
			wantCorrupt := damage != "missing"
			readErr = storageCause(readErr)
			if errors.Is(readErr, sdk.ErrCorrupt) != wantCorrupt || errors.Is(readErr, fs.ErrNotExist) == wantCorrupt {
				t.Fatalf("error %v: corrupt %v, missing %v", readErr, errors.Is(readErr, sdk.ErrCorrupt), errors.Is(readErr, fs.ErrNotExist))
			}
			_ = st
		})
	}
}

func utilRangeAll() util.Range { return util.Range{} }

// TestStaleCachesRemoved: a new process's cache removes the cache directories of processes
// that are gone (their lock is free) and leaves those of running ones.
func TestStaleCachesRemoved(t *testing.T) {
	local := t.TempDir()
	stale := filepath.Join(local, "cache-dead")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cacheLock, "000001.ldb"} {
		if err := os.WriteFile(filepath.Join(stale, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := newProcessCache(local, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stale cache %s: %v, want it removed", stale, err)
	}
	again, err := newProcessCache(local, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*cache{live, again} {
		if _, err := os.Stat(filepath.Join(c.dir, cacheLock)); err != nil {
			t.Fatalf("running cache %s: %v", c.dir, err)
		}
	}
}

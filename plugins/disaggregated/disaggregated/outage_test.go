package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	goleveldberrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// errInjected is the failure of every call of a flakyRemote that is down.
var errInjected = errors.New("dial tcp 127.0.0.1:9000: connect: connection refused (injected)")

// flakyRemote is a Remote that fails every call while it is down, as an object store that
// stopped answering does, and counts the calls that failed.
type flakyRemote struct {
	Remote
	down   atomic.Bool
	failed atomic.Int64 // calls refused while down
}

func (r *flakyRemote) fail(op, name string) error {
	r.failed.Add(1)
	return fmt.Errorf("%s object %s in %s: %w", op, name, r, errInjected)
}

func (r *flakyRemote) Create(ctx context.Context, name string, src io.Reader, size int64) error {
	if r.down.Load() {
		return r.fail("create", name)
	}
	return r.Remote.Create(ctx, name, src, size)
}

func (r *flakyRemote) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if r.down.Load() {
		return nil, r.fail("open", name)
	}
	return r.Remote.Open(ctx, name)
}

func (r *flakyRemote) Size(ctx context.Context, name string) (int64, error) {
	if r.down.Load() {
		return 0, r.fail("size of", name)
	}
	return r.Remote.Size(ctx, name)
}

func (r *flakyRemote) List(ctx context.Context, prefix string) ([]string, error) {
	if r.down.Load() {
		return nil, r.fail("list", prefix)
	}
	return r.Remote.List(ctx, prefix)
}

func (r *flakyRemote) Delete(ctx context.Context, name string) error {
	if r.down.Load() {
		return r.fail("delete", name)
	}
	return r.Remote.Delete(ctx, name)
}

// waitFor waits, up to a minute, until cond holds, failing t with what otherwise.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStoreUnreachable stops the remote store in the middle of a backend's life and
// starts it again, in one process: a restore while it is down fails naming a table, a read
// fails with the store's error (not as corruption), and a compaction that cannot reach its
// tables fails with it too and is tried again in the background (goleveldb waits 1 s, then
// doubles up to 8 s) instead of breaking the database for good (goleveldb takes a corrupt
// table as a persistent error; Flink's FLINK-41742 is that kind of breakage). Once the
// store answers, the same backend restores, a compaction succeeds, writes and reads go on,
// and a checkpoint restores to the exact state.
func TestStoreUnreachable(t *testing.T) {
	remote := fileTestStore(t)
	p := sdktest.Params("op", 0, 1)
	src := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), p)
	m := sdktest.Model{}
	sdktest.Fill(t, src, m, p.KeyGroups, 60000, "v1")
	settle(t, src) // one settled level: opening the restored database reads no table
	streams := newAdoptingStreams(t, remote)
	hs := snapshotTo(t, src, sdk.SnapshotOptions{CheckpointID: 1}, streams)

	b := testBackend(t, remote, "0") // no table stays cached once closed: reads fetch
	flaky := &flakyRemote{Remote: b.remote}
	b.remote = flaky
	flaky.down.Store(true)
	kb := sdktest.OpenKeyed(t, b, p)
	err := kb.Restore(bg, hs, streams)
	if err == nil || !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "table ") {
		t.Fatalf("restore with the store down: %v, want the store's error naming a table", err)
	}
	kb.Close()
	flaky.down.Store(false)
	kb = sdktest.OpenRestored(t, b, p, hs, streams)  // what the restart strategy's next attempt does
	sdktest.Fill(t, kb, m, p.KeyGroups, 30000, "v2") // keys 0..29999 again: a newer level

	flaky.down.Store(true)
	const inTable = 59999 // written by v1 alone: in the restored table, not opened yet
	_, err = kb.Get(bg, [][]byte{sdktest.NumberedKey(p.KeyGroups.Start+inTable%(p.KeyGroups.End-p.KeyGroups.Start), inTable)})
	if err == nil || !errors.Is(err, errInjected) || errors.Is(err, sdk.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read with the store down: %v, want the store's error, not corruption", err)
	}
	db := kb.(*keyed).parts[0].db
	err = db.CompactRange(util.Range{})
	if err == nil || !errors.Is(err, errInjected) || goleveldberrors.IsCorrupted(err) {
		t.Fatalf("a compaction with the store down: %v, want the store's error, not corruption", err)
	}
	before := flaky.failed.Load()
	waitFor(t, "goleveldb did not try the compaction again while the store was down", func() bool { return flaky.failed.Load() >= before+2 })
	flaky.down.Store(false)
	// Each call queues a compaction, answered at once with the error while it stands: ask
	// once a second, not at waitFor's pace, until one succeeds.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		err := db.CompactRange(util.Range{})
		if err == nil {
			break
		}
		if !errors.Is(err, errInjected) || time.Now().After(deadline) {
			t.Fatalf("a compaction once the store was back: %v", err)
		}
	}
	sdktest.CheckContents(t, kb, m)
	sdktest.Fill(t, kb, m, p.KeyGroups, 60000, "v3")
	settle(t, kb)
	hs2 := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 2}, streams)
	sdktest.CheckContents(t, sdktest.OpenRestored(t, testBackend(t, remote, "1mb"), p, hs2, streams), m)
}

// within runs f and fails t when it has not returned within a minute.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked for a minute", what)
		return nil
	}
}

// TestLargeWriteDuringOutage: a batch larger than the write buffer, written while the
// store is down, fails with the store's error, and so does the next, instead of blocking
// (goleveldb's own path for such batches, a transaction, kept the database's write lock
// when the flush before it failed: every later write and Close then blocked for good);
// once the store is back the database takes writes and closes.
func TestLargeWriteDuringOutage(t *testing.T) {
	root := t.TempDir()
	inner, err := openRemote(bg, "file://"+filepath.Join(root, "remote"), nil)
	if err != nil {
		t.Fatal(err)
	}
	flaky := &flakyRemote{Remote: inner}
	c, err := newCache(filepath.Join(root, "cache"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	db, st, err := openDB(filepath.Join(root, "db"), flaky, c, "t/", nil, nil, config{writeBufferSize: 64 << 10, blockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 100 {
		if err := db.Put([]byte(fmt.Sprintf("k%05d", i)), value(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	big := new(goleveldb.Batch) // about 250 KiB, four times the write buffer
	for i := range 5000 {
		big.Put([]byte(fmt.Sprintf("big%05d", i)), value(i)[:40])
	}
	flaky.down.Store(true)
	for i := range 2 {
		if err := within(t, fmt.Sprintf("large write %d with the store down", i), func() error { return db.Write(big, nil) }); err != nil && !errors.Is(err, errInjected) {
			t.Fatalf("large write %d with the store down: %v, want the store's error or none", i, err)
		}
	}
	flaky.down.Store(false)
	waitFor(t, "no write succeeded once the store was back", func() bool {
		return within(t, "a write once the store was back", func() error { return db.Write(big, nil) }) == nil
	})
	if err := within(t, "Close", db.Close); err != nil {
		t.Fatal(err)
	}
}

package disaggregated

import (
	"bytes"
	"fmt"
	"testing"
)

// TestCutRightAfterOpenRestores: a snapshot taken right after a restored database opened,
// before goleveldb wrote a second record to the new manifest it opens with, copies that
// manifest's first record whole (goleveldb flushes it without a sync), so a restore from
// it opens and reads every key. The kill -9 crash loop of the e2e tests found such checkpoints, refused at every
// restore with "manifest corrupted (field 'comparer'): missing".
func TestCutRightAfterOpenRestores(t *testing.T) {
	db, st, c, remote := testDB(t, 1<<20)
	for i := range 100 {
		if err := db.Put([]byte(fmt.Sprintf("k%03d", i)), value(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// A restored database writes its first record to a new manifest when it opens; the
	// next record comes only with the next memtable flush or compaction.
	cfg := config{writeBufferSize: 64 << 10, blockCacheSize: 1 << 20}
	cut := func(st *store, id int64) *layout {
		t.Helper()
		l, err := st.takeCut(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.manifest) == 0 {
			t.Fatalf("cut %d copied an empty manifest", id)
		}
		return l
	}
	l1 := cut(st, 1)
	restored, st2, err := openDB(t.TempDir(), remote, c, "r/", l1, tablesOf(l1, remote), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	l2 := cut(st2, 2)
	again, _, err := openDB(t.TempDir(), remote, c, "s/", l2, tablesOf(l2, remote), cfg)
	if err != nil {
		t.Fatalf("open the cut taken right after a restore opened: %v", err)
	}
	defer again.Close()
	for i := range 100 {
		v, err := again.Get([]byte(fmt.Sprintf("k%03d", i)), nil)
		if err != nil || !bytes.Equal(v, value(i)) {
			t.Fatalf("key %d after the second restore: %q, %v", i, v, err)
		}
	}
}

// tablesOf restores the tables of l, all on remote, in place.
func tablesOf(l *layout, remote Remote) func(*store) ([]*table, error) {
	return func(*store) ([]*table, error) {
		var out []*table
		for _, ti := range l.tables {
			out = append(out, &table{num: ti.Num, remote: remote, object: ti.Object, size: ti.Size, crc: ti.CRC, handleDone: true})
		}
		return out, nil
	}
}

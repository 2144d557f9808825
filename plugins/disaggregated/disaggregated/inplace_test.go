package disaggregated

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

var bg = context.Background()

// testBackend returns a backend with a fresh working directory on the remote store, its
// cache bounded at cacheSize.
func testBackend(t *testing.T, remote testStore, cacheSize string) *Backend {
	t.Helper()
	opts := sdk.Options{OptionLocalDir: t.TempDir(), OptionWriteBufferSize: "256kb", OptionCacheSize: cacheSize}
	maps.Copy(opts, remote)
	b := New()
	if err := b.Configure(bg, opts); err != nil {
		t.Fatal(err)
	}
	return b
}

// objects lists the remote store's objects.
func objects(t *testing.T, remote testStore) []string {
	t.Helper()
	names, err := remote.open(t).List(bg, "")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// layoutOf reads the layout of a checkpoint's one handle, checking the handle's shape: the
// layout stream, then one shared file per table.
func layoutOf(t *testing.T, hs []sdk.KeyedStateHandle, streams sdk.StateReader) *layout {
	t.Helper()
	if len(hs) != 1 || hs[0].Format != FormatDisaggregated || len(hs[0].Files) == 0 || hs[0].Files[0].Name != layoutFile {
		t.Fatalf("handles %+v, want one %s handle starting with its layout", hs, FormatDisaggregated)
	}
	rc, err := streams.Open(bg, hs[0].Files[0].Handle)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	l, err := readLayout(rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs[0].Files) != 1+len(l.tables) {
		t.Fatalf("a handle of %d files for %d tables", len(hs[0].Files), len(l.tables))
	}
	for i, tb := range l.tables {
		if f := hs[0].Files[1+i]; f.Name != tb.File || f.Handle.Scope != sdk.ScopeShared || f.Handle.Size != tb.Size {
			t.Fatalf("table %d listed as %+v, its file is %+v: want a shared file of its size named %q", tb.Num, tb, f, tb.File)
		}
	}
	return l
}

// objectsOf returns the sorted object names of l's tables.
func objectsOf(l *layout) []string {
	var out []string
	for _, tb := range l.tables {
		out = append(out, tb.Object)
	}
	slices.Sort(out)
	return out
}

// missing returns the names of want that are not in have.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// TestCheckpointInPlace: a checkpoint's stream holds no table (only the manifest and the
// journals), its tables outlive the compactions and the Close of the backend that wrote
// them, and a restore into a backend with an empty cache downloads nothing until a read
// needs a table. The restored backend never deletes the checkpoint's tables (they are the
// checkpoint's, as after a NO_CLAIM restore), and its Full checkpoint lists only tables of
// its own. It runs on a file:// remote and on an s3:// one (the test S3 server).
func TestCheckpointInPlace(t *testing.T) {
	t.Run("file", func(t *testing.T) { checkCheckpointInPlace(t, fileTestStore(t)) })
	t.Run("s3", func(t *testing.T) { checkCheckpointInPlace(t, s3TestStore(t)) })
}

func checkCheckpointInPlace(t *testing.T, remote testStore) {
	p := sdktest.Params("op", 0, 1)
	b1 := testBackend(t, remote, "64mb")
	kb1 := sdktest.OpenKeyed(t, b1, p)
	m := sdktest.Model{}
	sdktest.Fill(t, kb1, m, p.KeyGroups, 60000, "v1")
	// Settle the tables, so that the checkpoint's version wants no compaction: one that
	// goleveldb starts when it opens the restored database would read (download) the
	// tables it compacts while the test measures what the restore itself fetched.
	if err := kb1.(*keyed).parts[0].db.CompactRange(util.Range{}); err != nil {
		t.Fatal(err)
	}
	sdktest.Fill(t, kb1, m, p.KeyGroups, 500, "v2") // in the memtable, in the journal
	streams := newAdoptingStreams(t, remote)
	hs := snapshotTo(t, kb1, sdk.SnapshotOptions{CheckpointID: 1}, streams)
	at1 := maps.Clone(m)
	l := layoutOf(t, hs, streams)
	var tableBytes int64
	for _, tb := range l.tables {
		tableBytes += tb.Size
	}
	var meta struct {
		Tables     int   `json:"tables"`
		TableBytes int64 `json:"table_bytes"`
	}
	if err := json.Unmarshal(hs[0].Meta, &meta); err != nil || meta.Tables != len(l.tables) || meta.TableBytes != tableBytes {
		t.Fatalf("Meta %s (%v), want %d tables of %d bytes", hs[0].Meta, err, len(l.tables), tableBytes)
	}
	if len(l.tables) == 0 || streams.Size() > tableBytes/2 {
		t.Fatalf("checkpoint stream of %d bytes for %d tables of %d bytes: want the tables referenced, not copied", streams.Size(), len(l.tables), tableBytes)
	}
	if err := kb1.NotifyCheckpointComplete(bg, 1); err != nil {
		t.Fatal(err)
	}
	for v := range 3 { // rewrite every key: compactions drop the checkpoint's tables from the live version
		sdktest.Fill(t, kb1, m, p.KeyGroups, 60000, "w"+string(rune('0'+v)))
	}
	if err := kb1.Close(); err != nil {
		t.Fatal(err)
	}
	want := objectsOf(l)
	if gone := missing(want, objects(t, remote)); len(gone) > 0 {
		t.Fatalf("tables of completed checkpoint 1 deleted: %v", gone)
	}

	b2 := testBackend(t, remote, "256kb")
	kb2 := sdktest.OpenRestored(t, b2, p, hs, streams)
	if n := b2.cache.fetchedBytes(); n != 0 {
		t.Fatalf("restore in place downloaded %d of the checkpoint's %d table bytes before the first read", n, tableBytes)
	}
	sdktest.CheckContents(t, kb2, at1)
	if n := b2.cache.fetchCount(); n == 0 {
		t.Fatal("reads after the restore fetched no table")
	}
	if ex := b2.cache.excessBytes(); ex != 0 {
		t.Fatalf("the cache exceeded its bound plus its open files by %d bytes", ex)
	}
	hs2 := snapshotTo(t, kb2, sdk.SnapshotOptions{CheckpointID: 2, Full: true}, streams)
	for _, o := range objectsOf(layoutOf(t, hs2, streams)) {
		if slices.Contains(want, o) {
			t.Fatalf("Full checkpoint 2 after the restore lists %s, a table of checkpoint 1", o)
		}
	}
	if err := kb2.NotifyCheckpointComplete(bg, 2); err != nil {
		t.Fatal(err)
	}
	for v := range 3 {
		sdktest.Fill(t, kb2, nil, p.KeyGroups, 60000, "x"+string(rune('0'+v)))
	}
	if err := kb2.Close(); err != nil {
		t.Fatal(err)
	}
	if gone := missing(want, objects(t, remote)); len(gone) > 0 {
		t.Fatalf("the restored backend deleted tables of checkpoint 1: %v", gone)
	}
	b3 := testBackend(t, remote, "1mb")
	sdktest.CheckContents(t, sdktest.OpenRestored(t, b3, p, hs2, streams), at1)
}

// filled returns a file:// remote store, and a keyed backend on it holding 40,000 keys,
// with its parameters and streams for its snapshots that adopt its tables.
func filled(t *testing.T) (testStore, sdk.KeyedBackendParams, sdk.KeyedStateBackend, *adoptingStreams) {
	remote := fileTestStore(t)
	p := sdktest.Params("op", 0, 1)
	kb := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), p)
	sdktest.Fill(t, kb, nil, p.KeyGroups, 40000, "v1")
	return remote, p, kb, newAdoptingStreams(t, remote)
}

// TestTableOwnership: the tables only the live database or an aborted checkpoint used are
// deleted (on Close at the latest); those of a completed checkpoint stay, exactly.
func TestTableOwnership(t *testing.T) {
	remote, p, kb, streams := filled(t)
	aborted := layoutOf(t, snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 1}, streams), streams)
	if err := kb.NotifyCheckpointAborted(bg, 1); err != nil {
		t.Fatal(err)
	}
	sdktest.Fill(t, kb, nil, p.KeyGroups, 40000, "v2")
	completed := layoutOf(t, snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 2}, streams), streams)
	if err := kb.NotifyCheckpointComplete(bg, 2); err != nil {
		t.Fatal(err)
	}
	sdktest.Fill(t, kb, nil, p.KeyGroups, 40000, "v3")
	if len(aborted.tables) == 0 || len(completed.tables) == 0 {
		t.Fatalf("checkpoints of %d and %d tables", len(aborted.tables), len(completed.tables))
	}
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := objects(t, remote), objectsOf(completed); !slices.Equal(got, want) {
		t.Fatalf("after Close the remote store holds %v, want the tables of completed checkpoint 2: %v", got, want)
	}
}

// TestRestoreMissingTable: a checkpoint one of whose tables is gone from the remote store
// is refused by Restore, naming the table.
func TestRestoreMissingTable(t *testing.T) {
	remote, p, kb, streams := filled(t)
	hs := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 1}, streams)
	if err := kb.NotifyCheckpointComplete(bg, 1); err != nil {
		t.Fatal(err)
	}
	l := layoutOf(t, hs, streams)
	victim := l.tables[len(l.tables)/2].Object
	if err := remote.open(t).Delete(bg, victim); err != nil {
		t.Fatal(err)
	}
	for _, rescale := range []bool{false, true} {
		q := p
		if rescale {
			q = sdktest.Params("op", 0, 2) // another key group range: read through, not in place
		}
		kb2 := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), q)
		err := kb2.Restore(bg, hs, streams)
		if err == nil || !strings.Contains(err.Error(), victim) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Restore (rescale %v) without %s: %v, want an error naming it", rescale, victim, err)
		}
	}
}

// TestCutsDuringCompactions takes checkpoints while goleveldb flushes and compacts in the
// background, and restores each in place: every restore holds exactly the state of its
// checkpoint (the cut of manifest, journals and tables is consistent).
func TestCutsDuringCompactions(t *testing.T) {
	remote := fileTestStore(t)
	p := sdktest.Params("op", 0, 1)
	kb := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), p)
	m := sdktest.Model{}
	streams := newAdoptingStreams(t, remote)
	for round := range 8 {
		sdktest.Fill(t, kb, m, p.KeyGroups, 15000+round*1000, "r"+string(rune('a'+round)))
		hs := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: int64(round + 1)}, streams)
		want := maps.Clone(m)
		sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(0, 1), Delete: true}}) // after the cut
		if err := kb.NotifyCheckpointComplete(bg, int64(round+1)); err != nil {
			t.Fatal(err)
		}
		restored := sdktest.OpenRestored(t, testBackend(t, remote, "1mb"), p, hs, streams)
		sdktest.CheckContents(t, restored, want)
		if err := restored.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

package disaggregated

import (
	"maps"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// fileRefs returns the refs of the table files of the handles, by file name.
func fileRefs(hs []sdk.KeyedStateHandle) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for _, f := range h.Files[1:] {
			out[f.Name] = f.Handle.Ref
		}
	}
	return out
}

// TestCheckpointCopiesWithoutAdoption: with streams that take no file over, a checkpoint
// gets the bytes of its tables in shared streams, a table once (a later checkpoint
// references the copy a completed one made; a copy of an aborted checkpoint, which the
// runner discards, is never referenced again); the tables stay the live database's, so
// its Close deletes them all, and a restore, which then has only the copies, writes them
// back to the remote store as tables of the restored database and reads the checkpoint's
// state.
func TestCheckpointCopiesWithoutAdoption(t *testing.T) {
	remote := fileTestStore(t)
	p := sdktest.Params("op", 0, 1)
	kb := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), p)
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 60000, "v1")
	settle(t, kb)
	streams := sdktest.NewMemoryStreams()
	hs1 := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 1}, streams)
	l1 := layoutOf(t, hs1, streams)
	var tableBytes int64
	for _, tb := range l1.tables {
		if !tb.Copied {
			t.Fatalf("table %d of checkpoint 1 is not copied, with no storage to adopt it", tb.Num)
		}
		tableBytes += tb.Size
	}
	if len(l1.tables) == 0 || streams.Size() < tableBytes {
		t.Fatalf("checkpoint 1 wrote %d bytes for %d tables of %d bytes: want the tables' bytes", streams.Size(), len(l1.tables), tableBytes)
	}
	if err := kb.NotifyCheckpointAborted(bg, 1); err != nil {
		t.Fatal(err)
	}
	hs2 := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 2}, streams)
	refs1, refs2 := fileRefs(hs1), fileRefs(hs2)
	for name, ref := range refs2 {
		if refs1[name] == ref {
			t.Fatalf("checkpoint 2 references %s, the copy of aborted checkpoint 1", ref)
		}
	}
	if err := kb.NotifyCheckpointComplete(bg, 2); err != nil {
		t.Fatal(err)
	}
	sdktest.Fill(t, kb, m, p.KeyGroups, 2000, "v3") // in the memtable: the tables stay
	at3 := maps.Clone(m)
	hs3 := snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 3}, streams)
	reused := 0
	for name, ref := range fileRefs(hs3) {
		if refs2[name] == ref {
			reused++
		}
	}
	if reused == 0 {
		t.Fatalf("checkpoint 3 copied every table again: want the copies of completed checkpoint 2 referenced")
	}
	if err := kb.NotifyCheckpointComplete(bg, 3); err != nil {
		t.Fatal(err)
	}
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if left := objects(t, remote); len(left) != 0 {
		t.Fatalf("after Close the remote store holds %v: the copied tables are the live database's, want them deleted", left)
	}
	restored := sdktest.OpenRestored(t, testBackend(t, remote, "1mb"), p, hs3, streams)
	sdktest.CheckContents(t, restored, at3)
	prefix := restored.(*keyed).parts[0].st.prefix
	for _, o := range objects(t, remote) {
		if !strings.HasPrefix(o, prefix) {
			t.Fatalf("after the restore the remote store holds %s: want only the restored database's tables (%s*)", o, prefix)
		}
	}
}

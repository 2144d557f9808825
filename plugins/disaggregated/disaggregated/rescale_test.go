package disaggregated

import (
	"fmt"
	"testing"

	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// settle compacts every part of kb, so that opening a restored copy of its databases
// starts no compaction (which would read tables while a test measures what a restore
// fetched).
func settle(t *testing.T, kb sdk.KeyedStateBackend) {
	t.Helper()
	for _, p := range kb.(*keyed).parts {
		if err := p.db.CompactRange(util.Range{}); err != nil {
			t.Fatal(err)
		}
	}
}

// restoreAll restores handles into subtask i of n of a backend on remote (one per
// subtask, so that each counts its own downloads), checks that the restore downloaded no
// table byte, and that the subtask holds exactly the pairs of m in its key groups.
func restoreAll(t *testing.T, remote testStore, n int, hs []sdk.KeyedStateHandle, streams sdk.StateReader, m sdktest.Model, parts int) []sdk.KeyedStateBackend {
	t.Helper()
	var out []sdk.KeyedStateBackend
	for i := range n {
		p := sdktest.Params("op", i, n)
		b := testBackend(t, remote, "256kb")
		kb := sdktest.OpenRestored(t, b, p, hs, streams)
		if got := b.cache.fetchedBytes(); got != 0 {
			t.Fatalf("restoring %d handles into subtask %d of %d downloaded %d table bytes before the first read", len(hs), i, n, got)
		}
		if got := len(kb.(*keyed).parts); parts > 0 && got != parts {
			t.Fatalf("subtask %d of %d (key groups %s) restored %d handles into %d parts, want %d", i, n, p.KeyGroups, len(hs), got, parts)
		}
		sdktest.CheckContents(t, kb, m.Within(p.KeyGroups))
		out = append(out, kb)
	}
	return out
}

// TestRescaleInPlace restores checkpoints at other parallelisms, each subtask opening the
// databases of the key groups it owns in place: one subtask's checkpoint into two (each
// opens the one database and reads only its half), those two subtasks' checkpoints into
// one (two parts), and that one's into three (parts of parts). No restore downloads a
// table byte before the first read, every key lands, with its value, in exactly the
// subtask that owns its key group (CheckContents scans every key group of each), and the
// rescaled subtasks go on writing, checkpointing and restoring.
func TestRescaleInPlace(t *testing.T) {
	remote := fileTestStore(t)
	streams := newAdoptingStreams(t, remote)
	m := sdktest.Model{}
	one := sdktest.OpenKeyed(t, testBackend(t, remote, "64mb"), sdktest.Params("op", 0, 1))
	sdktest.Fill(t, one, m, sdk.KeyGroupRange{Start: 0, End: 128}, 60000, "v1")
	settle(t, one)
	sdktest.Fill(t, one, m, sdk.KeyGroupRange{Start: 0, End: 128}, 300, "v1b") // in the journal
	hs1 := snapshotTo(t, one, sdk.SnapshotOptions{CheckpointID: 1}, streams)

	two := restoreAll(t, remote, 2, hs1, streams, m, 1)
	var hs2 []sdk.KeyedStateHandle
	for i, kb := range two {
		p := sdktest.Params("op", i, 2)
		sdktest.Fill(t, kb, m, p.KeyGroups, 20000, fmt.Sprintf("v2-%d", i))
		settle(t, kb)
		hs2 = append(hs2, snapshotTo(t, kb, sdk.SnapshotOptions{CheckpointID: 2}, streams)...)
	}

	merged := restoreAll(t, remote, 1, hs2, streams, m, 2)[0]
	sdktest.Fill(t, merged, m, sdk.KeyGroupRange{Start: 0, End: 128}, 30000, "v3") // across both parts
	sdktest.CheckContents(t, merged, m)
	settle(t, merged)
	hs3 := snapshotTo(t, merged, sdk.SnapshotOptions{CheckpointID: 3}, streams)
	if len(hs3) != 2 || hs3[0].KeyGroups != (sdk.KeyGroupRange{Start: 0, End: 64}) || hs3[1].KeyGroups != (sdk.KeyGroupRange{Start: 64, End: 128}) {
		t.Fatalf("the merged subtask's checkpoint has handles %v, want one per part: [0,64) and [64,128)", keyGroupsOf(hs3))
	}
	restoreAll(t, remote, 3, hs3, streams, m, 0)
}

// keyGroupsOf returns the key groups of handles, for messages.
func keyGroupsOf(hs []sdk.KeyedStateHandle) []sdk.KeyGroupRange {
	var out []sdk.KeyGroupRange
	for _, h := range hs {
		out = append(out, h.KeyGroups)
	}
	return out
}

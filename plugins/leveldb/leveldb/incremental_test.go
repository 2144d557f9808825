package leveldb

import (
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

var incrementalOpts = sdk.Options{sdk.OptionIncremental: "true"}

// checkpointTo takes checkpoint id of kb into streams and returns its one handle.
func checkpointTo(t testing.TB, kb sdk.KeyedStateBackend, id int64, streams *memStreams) sdk.KeyedStateHandle {
	t.Helper()
	s := mustSnapshot(t, kb, id)
	defer s.Release()
	hs, err := s.Write(bg, streams)
	if err != nil {
		t.Fatalf("checkpoint %d: Write: %v", id, err)
	}
	if len(hs) != 1 || hs[0].Format != FormatIncremental {
		t.Fatalf("checkpoint %d: handles %+v, want one of format %q", id, hs, FormatIncremental)
	}
	for _, f := range hs[0].Files {
		if f.Handle.Scope != sdk.ScopeShared {
			t.Fatalf("checkpoint %d: file %q has scope %v, want shared", id, f.Name, f.Handle.Scope)
		}
	}
	return hs[0]
}

// fileNames returns the names of h's files.
func fileNames(h sdk.KeyedStateHandle) []string {
	var out []string
	for _, f := range h.Files {
		out = append(out, f.Name)
	}
	return out
}

// added returns the bytes of h's files that prev does not reference: what h's checkpoint
// uploaded.
func added(h, prev sdk.KeyedStateHandle) int64 {
	old := map[string]bool{}
	for _, f := range prev.Files {
		old[f.Handle.Ref] = true
	}
	var n int64
	for _, f := range h.Files {
		if !old[f.Handle.Ref] {
			n += f.Handle.Size
		}
	}
	return n
}

func complete(t testing.TB, kb sdk.KeyedStateBackend, id int64) {
	t.Helper()
	if err := kb.NotifyCheckpointComplete(bg, id); err != nil {
		t.Fatalf("NotifyCheckpointComplete(%d): %v", id, err)
	}
}

// TestIncrementalChain: a base, then one delta per completed checkpoint referencing the
// earlier files by their handles; deletes, aborted and unconfirmed checkpoints; every
// checkpoint restores to its own view.
func TestIncrementalChain(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := params("chain", 0, 1)
	kb := openKeyed(t, sb, p)
	streams := newMemStreams()
	m := model{}
	fill(t, kb, m, p.KeyGroups, 2000, 50, "v1")

	h1 := checkpointTo(t, kb, 1, streams)
	if got := fileNames(h1); fmt.Sprint(got) != "[base]" {
		t.Fatalf("first checkpoint files %v, want [base]", got)
	}
	views := []model{clone(m)}
	handles := []sdk.KeyedStateHandle{h1}
	complete(t, kb, 1)

	// Checkpoint 2: some puts and deletes.
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(3, "k0000003"), Value: []byte("changed")}, {Key: key(4, "k0000004"), Delete: true}, {Key: key(5, "new"), Value: nil}})
	h2 := checkpointTo(t, kb, 2, streams)
	if got := fileNames(h2); fmt.Sprint(got) != "[base delta-1]" || h2.Files[0].Handle.Ref != h1.Files[0].Handle.Ref {
		t.Fatalf("second checkpoint files %v (base %+v), want [base delta-1] reusing base %+v", got, h2.Files[0].Handle, h1.Files[0].Handle)
	}
	views, handles = append(views, clone(m)), append(handles, h2)
	// Checkpoint 3 is aborted: its keys go into checkpoint 4.
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(6, "k0000006"), Value: []byte("in-aborted")}})
	checkpointTo(t, kb, 3, streams)
	if err := kb.NotifyCheckpointAborted(bg, 3); err != nil {
		t.Fatal(err)
	}
	// Checkpoint 2 completes only now; 4 builds on it.
	complete(t, kb, 2)
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(7, "k0000007"), Delete: true}})
	h4 := checkpointTo(t, kb, 4, streams)
	if got := fileNames(h4); fmt.Sprint(got) != "[base delta-1 delta-2]" || h4.Files[1].Handle.Ref != h2.Files[1].Handle.Ref {
		t.Fatalf("fourth checkpoint files %v, want [base delta-1 delta-2] reusing delta-1", got)
	}
	views, handles = append(views, clone(m)), append(handles, h4)
	// Checkpoint 5 is never confirmed: 6 must still hold 5's keys.
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(8, "k0000008"), Value: []byte("in-5")}})
	checkpointTo(t, kb, 5, streams)
	complete(t, kb, 4)
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(9, "k0000009"), Value: []byte("in-6")}})
	h6 := checkpointTo(t, kb, 6, streams)
	if got := fileNames(h6); fmt.Sprint(got) != "[base delta-1 delta-2 delta-3]" {
		t.Fatalf("sixth checkpoint files %v", got)
	}
	views, handles = append(views, clone(m)), append(handles, h6)

	for i, h := range handles {
		checkContents(t, restored(t, sb, p, []sdk.KeyedStateHandle{h}, streams), views[i])
	}
	// A savepoint stays canonical and exclusive, and does not disturb the chain.
	sp, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 7, Savepoint: true})
	if err != nil {
		t.Fatal(err)
	}
	spHandles := snapshotTo(t, sp, streams)
	checkContents(t, restored(t, sb, p, spHandles, streams), m)
	complete(t, kb, 6)
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(10, "k0000010"), Value: []byte("in-8")}})
	h8 := checkpointTo(t, kb, 8, streams)
	if got := fileNames(h8); fmt.Sprint(got) != "[base delta-1 delta-2 delta-3 delta-4]" {
		t.Fatalf("eighth checkpoint files %v", got)
	}
	checkContents(t, restored(t, sb, p, []sdk.KeyedStateHandle{h8}, streams), m)
}

// TestIncrementalSavepointIsCanonical checks that a savepoint of an incremental backend is
// a canonical exclusive snapshot that another backend restores.
func TestIncrementalSavepointIsCanonical(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := params("sp", 0, 1)
	kb := openKeyed(t, sb, p)
	m := model{}
	fill(t, kb, m, p.KeyGroups, 100, 10, "sp")
	s, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: true})
	if err != nil {
		t.Fatal(err)
	}
	streams := newMemStreams()
	hs := snapshotTo(t, s, streams) // checks canonical and exclusive
	checkContents(t, restored(t, testPlugin(t, nil), p, hs, streams), m)
}

// TestIncrementalRestoreContinuesChain: a restore into the same key groups keeps
// referencing the restored files; into other key groups the next checkpoint is a base.
func TestIncrementalRestoreContinuesChain(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := params("restore", 0, 1)
	kb := openKeyed(t, sb, p)
	streams := newMemStreams()
	m := model{}
	fill(t, kb, m, p.KeyGroups, 1000, 20, "r")
	checkpointTo(t, kb, 1, streams)
	complete(t, kb, 1)
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(1, "x"), Value: []byte("x")}})
	h2 := checkpointTo(t, kb, 2, streams)
	complete(t, kb, 2)

	same := restored(t, sb, p, []sdk.KeyedStateHandle{h2}, streams)
	checkContents(t, same, m)
	m2 := clone(m)
	mustWrite(t, same, m2, []sdk.Mutation{{Key: key(2, "k0000002"), Delete: true}})
	h3 := checkpointTo(t, same, 3, streams)
	if got := fileNames(h3); fmt.Sprint(got) != "[base delta-1 delta-2]" || h3.Files[0].Handle.Ref != h2.Files[0].Handle.Ref || h3.Files[1].Handle.Ref != h2.Files[1].Handle.Ref {
		t.Fatalf("checkpoint after restore: files %v, want the restored base and delta-1 plus delta-2", got)
	}
	checkContents(t, restored(t, sb, p, []sdk.KeyedStateHandle{h3}, streams), m2)

	half := params("restore", 1, 2)
	other := restored(t, sb, half, []sdk.KeyedStateHandle{h2}, streams)
	checkContents(t, other, m.within(half.KeyGroups))
	h := checkpointTo(t, other, 3, streams)
	if got := fileNames(h); fmt.Sprint(got) != "[base]" || h.KeyGroups != half.KeyGroups {
		t.Fatalf("checkpoint after a rescaling restore: files %v key groups %s, want a new base of %s", got, h.KeyGroups, half.KeyGroups)
	}
	checkContents(t, restored(t, sb, half, []sdk.KeyedStateHandle{h}, streams), m.within(half.KeyGroups))
}

// TestIncrementalNewBase: the chain is cut when it reaches maxDeltas deltas, or when its
// deltas outgrow the base.
func TestIncrementalNewBase(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := params("rebase", 0, 1)
	kb := openKeyed(t, sb, p)
	streams := newMemStreams()
	m := model{}
	fill(t, kb, m, p.KeyGroups, 500, 20, "b")
	id := int64(1)
	checkpointTo(t, kb, id, streams)
	complete(t, kb, id)
	for i := 1; i <= maxDeltas+1; i++ {
		id++
		mustWrite(t, kb, m, []sdk.Mutation{{Key: key(i, "k"), Value: []byte{byte(i)}}})
		h := checkpointTo(t, kb, id, streams)
		complete(t, kb, id)
		want := i + 1
		if i > maxDeltas {
			want = 1
		}
		if len(h.Files) != want {
			t.Fatalf("checkpoint %d: %d files %v, want %d", id, len(h.Files), fileNames(h), want)
		}
	}
	// Rewriting every key makes a delta as large as the base: the next one is a base.
	id++
	fill(t, kb, m, p.KeyGroups, 500, 20, "c")
	if h := checkpointTo(t, kb, id, streams); len(h.Files) != 2 {
		t.Fatalf("checkpoint %d: files %v, want a delta", id, fileNames(h))
	}
	complete(t, kb, id)
	id++
	mustWrite(t, kb, m, []sdk.Mutation{{Key: key(1, "k"), Value: []byte("last")}})
	h := checkpointTo(t, kb, id, streams)
	if len(h.Files) != 1 {
		t.Fatalf("checkpoint %d after a delta as large as the base: files %v, want a new base", id, fileNames(h))
	}
	checkContents(t, restored(t, sb, p, []sdk.KeyedStateHandle{h}, streams), m)
}

// TestIncrementalUploadsLittle measures what the issue asks: after changing 1% of 1M keys,
// the bytes the next incremental checkpoint uploads, as a fraction of a full checkpoint.
func TestIncrementalUploadsLittle(t *testing.T) {
	const n, changed = 1_000_000, 10_000
	sb := testPlugin(t, incrementalOpts)
	p := params("ratio", 0, 1)
	kb := openKeyed(t, sb, p)
	streams := newMemStreams()
	writeRatioState(t, kb, n)
	full := checkpointTo(t, kb, 1, streams)
	complete(t, kb, 1)
	updateRatioState(t, kb, n, changed)
	inc := checkpointTo(t, kb, 2, streams)
	fullBytes, incBytes := full.Files[0].Handle.Size, added(inc, full)
	ratio := float64(incBytes) / float64(fullBytes)
	t.Logf("full checkpoint of %d keys: %d bytes; after changing %d keys the incremental checkpoint uploaded %d bytes: %.2f%% of a full checkpoint", n, fullBytes, changed, incBytes, 100*ratio)
	if ratio >= 0.05 {
		t.Fatalf("incremental checkpoint uploaded %.2f%% of a full checkpoint, want < 5%%", 100*ratio)
	}
	if len(inc.Files) != 2 || inc.Files[0].Handle.Ref != full.Files[0].Handle.Ref {
		t.Fatalf("incremental checkpoint files %v, want the base of the full one and one delta", fileNames(inc))
	}
}

// ratioKey is key i of the ratio test, over 128 key groups.
func ratioKey(i int) []byte { return key(i%128, fmt.Sprintf("user-%09d", i)) }

// writeRatioState writes n keys with 32-byte values.
func writeRatioState(t testing.TB, kb sdk.KeyedStateBackend, n int) {
	t.Helper()
	val := make([]byte, 32)
	muts := make([]sdk.Mutation, 0, 8192)
	for i := range n {
		muts = append(muts, sdk.Mutation{Key: ratioKey(i), Value: val})
		if len(muts) == cap(muts) || i == n-1 {
			mustWrite(t, kb, nil, muts)
			muts = muts[:0]
		}
	}
}

// updateRatioState rewrites changed of the n keys, spread evenly.
func updateRatioState(t testing.TB, kb sdk.KeyedStateBackend, n, changed int) {
	t.Helper()
	val := []byte("changed-value-of-thirty-two-byte")
	var muts []sdk.Mutation
	for i := 0; i < n; i += n / changed {
		muts = append(muts, sdk.Mutation{Key: ratioKey(i), Value: val})
	}
	mustWrite(t, kb, nil, muts)
}

// BenchmarkIncrementalCheckpoint reports, for 1M keys of which 1% changed, the bytes and
// time of a full checkpoint and of the incremental one after it.
func BenchmarkIncrementalCheckpoint(b *testing.B) {
	const n, changed = 1_000_000, 10_000
	sb := testPlugin(b, incrementalOpts)
	kb := openKeyed(b, sb, params("bench-inc", 0, 1))
	writeRatioState(b, kb, n)
	streams := newMemStreams()
	id := int64(1)
	full := checkpointTo(b, kb, id, streams)
	complete(b, kb, id)
	b.ResetTimer()
	var incBytes int64
	for b.Loop() {
		b.StopTimer()
		updateRatioState(b, kb, n, changed)
		id++
		b.StartTimer()
		h := checkpointTo(b, kb, id, streams)
		b.StopTimer()
		incBytes = h.Files[len(h.Files)-1].Handle.Size
		complete(b, kb, id)
		b.StartTimer()
	}
	b.ReportMetric(float64(full.Files[0].Handle.Size), "full-bytes")
	b.ReportMetric(float64(incBytes), "delta-bytes")
	b.ReportMetric(100*float64(incBytes)/float64(full.Files[0].Handle.Size), "delta-%")
}

// clone copies m.
func clone(m model) model {
	out := model{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

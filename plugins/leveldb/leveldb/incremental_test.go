package leveldb

import (
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

var incrementalOpts = sdk.Options{sdk.OptionIncremental: "true"}

// checkpointTo takes checkpoint id of kb (parameters p) into streams and returns its one
// handle, which must be incremental and written with shared streams only.
func checkpointTo(t testing.TB, kb sdk.KeyedStateBackend, p sdk.KeyedBackendParams, id int64, streams *sdktest.MemoryStreams) sdk.KeyedStateHandle {
	t.Helper()
	hs := sdktest.TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: id}, streams)
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

// complete tells kb that checkpoint id is complete.
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
	p := sdktest.Params("chain", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	streams := sdktest.NewMemoryStreams()
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 2000, "v1")

	h1 := checkpointTo(t, kb, p, 1, streams)
	if got := fileNames(h1); fmt.Sprint(got) != "[base]" {
		t.Fatalf("first checkpoint files %v, want [base]", got)
	}
	views := []sdktest.Model{m.Clone()}
	handles := []sdk.KeyedStateHandle{h1}
	complete(t, kb, 1)

	// Checkpoint 2: some puts and deletes.
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(3, 3), Value: []byte("changed")}, {Key: sdktest.NumberedKey(4, 4), Delete: true}, {Key: sdktest.StateKey(5, "new"), Value: nil}})
	h2 := checkpointTo(t, kb, p, 2, streams)
	if got := fileNames(h2); fmt.Sprint(got) != "[base delta-1]" || h2.Files[0].Handle.Ref != h1.Files[0].Handle.Ref {
		t.Fatalf("second checkpoint files %v (base %+v), want [base delta-1] reusing base %+v", got, h2.Files[0].Handle, h1.Files[0].Handle)
	}
	views, handles = append(views, m.Clone()), append(handles, h2)
	// Checkpoint 3 is aborted: its keys go into checkpoint 4.
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(6, 6), Value: []byte("in-aborted")}})
	checkpointTo(t, kb, p, 3, streams)
	if err := kb.NotifyCheckpointAborted(bg, 3); err != nil {
		t.Fatal(err)
	}
	// Checkpoint 2 completes only now; 4 builds on it.
	complete(t, kb, 2)
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(7, 7), Delete: true}})
	h4 := checkpointTo(t, kb, p, 4, streams)
	if got := fileNames(h4); fmt.Sprint(got) != "[base delta-1 delta-2]" || h4.Files[1].Handle.Ref != h2.Files[1].Handle.Ref {
		t.Fatalf("fourth checkpoint files %v, want [base delta-1 delta-2] reusing delta-1", got)
	}
	views, handles = append(views, m.Clone()), append(handles, h4)
	// Checkpoint 5 is never confirmed: 6 must still hold 5's keys.
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(8, 8), Value: []byte("in-5")}})
	checkpointTo(t, kb, p, 5, streams)
	complete(t, kb, 4)
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(9, 9), Value: []byte("in-6")}})
	h6 := checkpointTo(t, kb, p, 6, streams)
	if got := fileNames(h6); fmt.Sprint(got) != "[base delta-1 delta-2 delta-3]" {
		t.Fatalf("sixth checkpoint files %v", got)
	}
	views, handles = append(views, m.Clone()), append(handles, h6)

	for i, h := range handles {
		sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h}, streams), views[i])
	}
	// A savepoint stays canonical and exclusive, and does not disturb the chain.
	spHandles := canonicalSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 7, Savepoint: true}, streams)
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, spHandles, streams), m)
	complete(t, kb, 6)
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.NumberedKey(10, 10), Value: []byte("in-8")}})
	h8 := checkpointTo(t, kb, p, 8, streams)
	if got := fileNames(h8); fmt.Sprint(got) != "[base delta-1 delta-2 delta-3 delta-4]" {
		t.Fatalf("eighth checkpoint files %v", got)
	}
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h8}, streams), m)
}

// TestIncrementalSavepointIsCanonical checks that a savepoint of an incremental backend is
// a canonical exclusive snapshot that another backend restores.
func TestIncrementalSavepointIsCanonical(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := sdktest.Params("sp", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 100, "sp")
	streams := sdktest.NewMemoryStreams()
	hs := canonicalSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: true}, streams)
	sdktest.CheckContents(t, sdktest.OpenRestored(t, testPlugin(t, nil), p, hs, streams), m)
}

// TestIncrementalRestoreContinuesChain: a restore into the same key groups keeps
// referencing the restored files; into other key groups the next checkpoint is a base.
func TestIncrementalRestoreContinuesChain(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := sdktest.Params("restore", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	streams := sdktest.NewMemoryStreams()
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 1000, "r")
	checkpointTo(t, kb, p, 1, streams)
	complete(t, kb, 1)
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.StateKey(1, "x"), Value: []byte("x")}})
	h2 := checkpointTo(t, kb, p, 2, streams)
	complete(t, kb, 2)

	same := sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h2}, streams)
	sdktest.CheckContents(t, same, m)
	m2 := m.Clone()
	sdktest.MustWrite(t, same, m2, []sdk.Mutation{{Key: sdktest.NumberedKey(2, 2), Delete: true}})
	h3 := checkpointTo(t, same, p, 3, streams)
	if got := fileNames(h3); fmt.Sprint(got) != "[base delta-1 delta-2]" || h3.Files[0].Handle.Ref != h2.Files[0].Handle.Ref || h3.Files[1].Handle.Ref != h2.Files[1].Handle.Ref {
		t.Fatalf("checkpoint after restore: files %v, want the restored base and delta-1 plus delta-2", got)
	}
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h3}, streams), m2)

	half := sdktest.Params("restore", 1, 2)
	other := sdktest.OpenRestored(t, sb, half, []sdk.KeyedStateHandle{h2}, streams)
	sdktest.CheckContents(t, other, m.Within(half.KeyGroups))
	h := checkpointTo(t, other, half, 3, streams)
	if got := fileNames(h); fmt.Sprint(got) != "[base]" || h.KeyGroups != half.KeyGroups {
		t.Fatalf("checkpoint after a rescaling restore: files %v key groups %s, want a new base of %s", got, h.KeyGroups, half.KeyGroups)
	}
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, half, []sdk.KeyedStateHandle{h}, streams), m.Within(half.KeyGroups))
}

// TestIncrementalFullSnapshotAfterRestore: a Full snapshot after a restore (the runner asks
// for one under claim mode NO_CLAIM) is a new base that references none of the restored
// files, also while an earlier snapshot is unconfirmed; once it completes, the chain goes
// on from it.
func TestIncrementalFullSnapshotAfterRestore(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := sdktest.Params("full", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	streams := sdktest.NewMemoryStreams()
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 1000, "f")
	checkpointTo(t, kb, p, 1, streams)
	complete(t, kb, 1)
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.StateKey(1, "x"), Value: []byte("x")}})
	restoredFrom := checkpointTo(t, kb, p, 2, streams)
	complete(t, kb, 2)
	restored := map[string]bool{}
	for _, f := range restoredFrom.Files {
		restored[f.Handle.Ref] = true
	}

	same := sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{restoredFrom}, streams)
	m2 := m.Clone()
	sdktest.MustWrite(t, same, m2, []sdk.Mutation{{Key: sdktest.NumberedKey(2, 2), Delete: true}})
	full := func(id int64) sdk.KeyedStateHandle {
		hs := sdktest.TakeSnapshot(t, same, p, sdk.SnapshotOptions{CheckpointID: id, Full: true}, streams)
		if len(hs) != 1 || fmt.Sprint(fileNames(hs[0])) != "[base]" {
			t.Fatalf("full snapshot %d: handles %+v, want one new base", id, hs)
		}
		for _, f := range hs[0].Files {
			if restored[f.Handle.Ref] {
				t.Fatalf("full snapshot %d references the restored file %s", id, f.Handle.Ref)
			}
		}
		return hs[0]
	}
	full(3) // never confirmed
	sdktest.MustWrite(t, same, m2, []sdk.Mutation{{Key: sdktest.StateKey(3, "y"), Value: []byte("y")}})
	h4 := full(4)
	complete(t, same, 4)
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h4}, streams), m2)
	sdktest.MustWrite(t, same, m2, []sdk.Mutation{{Key: sdktest.StateKey(4, "z"), Value: []byte("z")}})
	h5 := checkpointTo(t, same, p, 5, streams)
	if got := fileNames(h5); fmt.Sprint(got) != "[base delta-1]" || h5.Files[0].Handle.Ref != h4.Files[0].Handle.Ref {
		t.Fatalf("checkpoint after the full one: files %v, want the full one's base and a delta", got)
	}
	for _, f := range h5.Files {
		if restored[f.Handle.Ref] {
			t.Fatalf("a checkpoint after the full one references the restored file %s", f.Handle.Ref)
		}
	}
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h5}, streams), m2)
}

// TestIncrementalNewBase: the chain is cut when it reaches maxDeltas deltas, or when its
// deltas outgrow the base.
func TestIncrementalNewBase(t *testing.T) {
	sb := testPlugin(t, incrementalOpts)
	p := sdktest.Params("rebase", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	streams := sdktest.NewMemoryStreams()
	m := sdktest.Model{}
	sdktest.Fill(t, kb, m, p.KeyGroups, 500, "b")
	id := int64(1)
	checkpointTo(t, kb, p, id, streams)
	complete(t, kb, id)
	for i := 1; i <= maxDeltas+1; i++ {
		id++
		sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.StateKey(i, "k"), Value: []byte{byte(i)}}})
		h := checkpointTo(t, kb, p, id, streams)
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
	sdktest.Fill(t, kb, m, p.KeyGroups, 500, "c")
	if h := checkpointTo(t, kb, p, id, streams); len(h.Files) != 2 {
		t.Fatalf("checkpoint %d: files %v, want a delta", id, fileNames(h))
	}
	complete(t, kb, id)
	id++
	sdktest.MustWrite(t, kb, m, []sdk.Mutation{{Key: sdktest.StateKey(1, "k"), Value: []byte("last")}})
	h := checkpointTo(t, kb, p, id, streams)
	if len(h.Files) != 1 {
		t.Fatalf("checkpoint %d after a delta as large as the base: files %v, want a new base", id, fileNames(h))
	}
	sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h}, streams), m)
}

// TestIncrementalUploadsLittle measures what the issue asks: after changing 1% of 1M keys,
// the bytes the next incremental checkpoint uploads, as a fraction of a full checkpoint.
func TestIncrementalUploadsLittle(t *testing.T) {
	const n, changed = 1_000_000, 10_000
	sb := testPlugin(t, incrementalOpts)
	p := sdktest.Params("ratio", 0, 1)
	kb := sdktest.OpenKeyed(t, sb, p)
	streams := sdktest.NewMemoryStreams()
	sdktest.WriteUserKeys(t, kb, n, 32)
	full := checkpointTo(t, kb, p, 1, streams)
	complete(t, kb, 1)
	updateRatioState(t, kb, n, changed)
	inc := checkpointTo(t, kb, p, 2, streams)
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

// updateRatioState rewrites changed of the n keys, spread evenly.
func updateRatioState(t testing.TB, kb sdk.KeyedStateBackend, n, changed int) {
	t.Helper()
	val := []byte("changed-value-of-thirty-two-byte")
	var muts []sdk.Mutation
	for i := 0; i < n; i += n / changed {
		muts = append(muts, sdk.Mutation{Key: sdktest.UserKey(i), Value: val})
	}
	sdktest.MustWrite(t, kb, nil, muts)
}

// BenchmarkIncrementalCheckpoint reports, for 1M keys of which 1% changed, the bytes and
// time of a full checkpoint and of the incremental one after it.
func BenchmarkIncrementalCheckpoint(b *testing.B) {
	const n, changed = 1_000_000, 10_000
	sb := testPlugin(b, incrementalOpts)
	p := sdktest.Params("bench-inc", 0, 1)
	kb := sdktest.OpenKeyed(b, sb, p)
	sdktest.WriteUserKeys(b, kb, n, 32)
	streams := sdktest.NewMemoryStreams()
	id := int64(1)
	full := checkpointTo(b, kb, p, id, streams)
	complete(b, kb, id)
	b.ResetTimer()
	var incBytes int64
	for b.Loop() {
		b.StopTimer()
		updateRatioState(b, kb, n, changed)
		id++
		b.StartTimer()
		h := checkpointTo(b, kb, p, id, streams)
		b.StopTimer()
		incBytes = h.Files[len(h.Files)-1].Handle.Size
		complete(b, kb, id)
		b.StartTimer()
	}
	b.ReportMetric(float64(full.Files[0].Handle.Size), "full-bytes")
	b.ReportMetric(float64(incBytes), "delta-bytes")
	b.ReportMetric(100*float64(incBytes)/float64(full.Files[0].Handle.Size), "delta-%")
}

// canonicalSnapshot snapshots kb (parameters p) into streams and checks that the snapshot
// is canonical and written with exclusive streams only, as full checkpoints and savepoints
// of both built-in backends are.
func canonicalSnapshot(t testing.TB, kb sdk.KeyedStateBackend, p sdk.KeyedBackendParams, opts sdk.SnapshotOptions, streams *sdktest.MemoryStreams) []sdk.KeyedStateHandle {
	t.Helper()
	hs := sdktest.TakeSnapshot(t, kb, p, opts, streams)
	for _, h := range hs {
		if h.Format != sdk.FormatCanonical {
			t.Fatalf("snapshot %+v: format %q, want %q", opts, h.Format, sdk.FormatCanonical)
		}
		for _, f := range h.Files {
			if f.Handle.Scope != sdk.ScopeExclusive {
				t.Fatalf("snapshot %+v: stream %q has scope %v, want exclusive", opts, f.Name, f.Handle.Scope)
			}
		}
	}
	return hs
}

// TestIncrementalTrackingBudget: the keys changed since the last completed checkpoint are
// tracked within the backend's budget (write-buffer-size, see trackedBudget): 2,000
// changed keys of a 20,000-key state make a delta with a 4 MiB write buffer, and a new
// base with a 64 KiB one, whose budget holds about 500 keys.
func TestIncrementalTrackingBudget(t *testing.T) {
	for _, c := range []struct {
		writeBuffer string
		files       int
	}{{"4mb", 2}, {"64kb", 1}} {
		t.Run(c.writeBuffer, func(t *testing.T) {
			sb := testPlugin(t, sdk.Options{sdk.OptionIncremental: "true", OptionWriteBufferSize: c.writeBuffer})
			p := sdktest.Params("budget", 0, 1)
			kb := sdktest.OpenKeyed(t, sb, p)
			streams := sdktest.NewMemoryStreams()
			m := sdktest.Model{}
			sdktest.Fill(t, kb, m, p.KeyGroups, 20000, "b")
			checkpointTo(t, kb, p, 1, streams)
			complete(t, kb, 1)
			sdktest.Fill(t, kb, m, p.KeyGroups, 2000, "c") // 2,000 keys changed
			h := checkpointTo(t, kb, p, 2, streams)
			if len(h.Files) != c.files {
				t.Fatalf("checkpoint 2: files %v, want %d", fileNames(h), c.files)
			}
			sdktest.CheckContents(t, sdktest.OpenRestored(t, sb, p, []sdk.KeyedStateHandle{h}, streams), m)
		})
	}
}

package checkpoint_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// disaggRun drives one keyed backend of the disaggregated backend through checkpoints as
// the runner does: streams from the store (Adopting over Checksummed), metadata published
// through fsstorage, retention by the store, then the backend told. Its tables are on a
// file:// remote on the checkpoint directory's disk, so fsstorage adopts them.
type disaggRun struct {
	t      *testing.T
	access sdk.CheckpointStorageAccess
	store  *checkpoint.Store
	p      sdk.KeyedBackendParams
	kb     sdk.KeyedStateBackend
	remote string // the remote directory
	refs   map[int64][]string
}

func newDisaggRun(t *testing.T, storage sdk.CheckpointStorage, job, remote string) *disaggRun {
	ctx := context.Background()
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	p := sdktest.Params("op", 0, 1)
	p.JobID = job
	return &disaggRun{t: t, access: access, store: checkpoint.NewStore(access, 1), p: p, remote: remote, refs: map[int64][]string{}}
}

// backend returns a disaggregated backend on the run's remote with a small cache, so
// that reads fetch tables from the remote.
func (r *disaggRun) backend() sdk.StateBackend {
	b := disaggregated.New()
	opts := sdk.Options{disaggregated.OptionRemote: "file://" + r.remote, disaggregated.OptionLocalDir: r.t.TempDir(),
		disaggregated.OptionWriteBufferSize: "256kb", disaggregated.OptionCacheSize: "512kb"}
	if err := b.Configure(context.Background(), opts); err != nil {
		r.t.Fatal(err)
	}
	return b
}

// checkpoint takes checkpoint id of the run's backend, completes and retains it, and
// notifies the backend; it returns the checkpoint.
func (r *disaggRun) checkpoint(id int64, full bool) *checkpoint.Completed {
	t := r.t
	t.Helper()
	ctx := context.Background()
	loc, err := r.access.InitializeLocationForCheckpoint(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: id, Full: full})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := snap.Write(ctx, r.store.Adopting(checkpoint.Checksummed(loc, nil)))
	snap.Release()
	if err != nil {
		t.Fatalf("checkpoint %d: %v", id, err)
	}
	m := &checkpoint.Metadata{Version: checkpoint.MetadataVersion, JobID: r.p.JobID, CheckpointID: id, Time: time.Now().UTC(),
		Backend: disaggregated.Name, MaxParallelism: r.p.MaxParallelism,
		Operators: []checkpoint.OperatorState{{ID: r.p.OperatorID, Parallelism: 1, Subtasks: []checkpoint.SubtaskState{{Keyed: hs}}}}}
	done, err := checkpoint.Publish(ctx, loc, m)
	if err != nil {
		t.Fatal(err)
	}
	c := &checkpoint.Completed{Location: done, Metadata: m, Owned: true}
	if err := r.store.Add(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := r.kb.NotifyCheckpointComplete(ctx, id); err != nil {
		t.Fatal(err)
	}
	r.refs[id] = tablePaths(t, m)
	if len(r.refs[id]) == 0 {
		t.Fatalf("checkpoint %d references no table file", id)
	}
	return c
}

// tablePaths returns the local paths of the table files m references in place: its shared
// files, by their file:// refs.
func tablePaths(t *testing.T, m *checkpoint.Metadata) []string {
	var out []string
	for ref := range checkpoint.SharedRefs(m) {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme != "file" || !strings.HasSuffix(u.Path, ".ldb") {
			t.Fatalf("shared file %q: want a table adopted in place (a file:// ref of a .ldb file)", ref)
		}
		out = append(out, u.Path)
	}
	slices.Sort(out)
	return out
}

// onDisk returns the table files on the remote.
func (r *disaggRun) onDisk() map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(r.remote, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".ldb") {
			out[p] = true
		}
		return nil
	})
	return out
}

// checkRetention checks the remote after checkpoint n was retained (num-retained 1): the
// tables of n and n-1 (deleted one checkpoint late) are there, and those of earlier
// checkpoints that neither references are gone. It returns how many of those there were.
func (r *disaggRun) checkRetention(n int64, protected []string) int {
	t := r.t
	t.Helper()
	disk := r.onDisk()
	keep := map[string]bool{}
	for _, id := range []int64{n, n - 1} {
		for _, p := range r.refs[id] {
			keep[p] = true
			if !disk[p] {
				t.Fatalf("after checkpoint %d: table %s of checkpoint %d was deleted, too early", n, p, id)
			}
		}
	}
	for _, p := range protected {
		keep[p] = true
		if !disk[p] {
			t.Fatalf("after checkpoint %d: table %s of the restored checkpoint, which the run does not own, was deleted", n, p)
		}
	}
	gone := map[string]bool{}
	for id := range r.refs {
		if id >= n-1 {
			continue
		}
		for _, p := range r.refs[id] {
			if !keep[p] && disk[p] {
				t.Fatalf("after checkpoint %d: table %s of checkpoint %d, which no retained checkpoint references since checkpoint %d, is still there", n, p, id, id+1)
			}
			if !keep[p] {
				gone[p] = true
			}
		}
	}
	return len(gone)
}

// TestRetentionReclaimsAdoptedTables runs the disaggregated backend with fsstorage, which
// adopts its tables, under num-retained 1, rewriting the state and compacting it between
// checkpoints so that every checkpoint references new tables. Each table a checkpoint
// references stays while a retained checkpoint references it and one checkpoint more, is
// deleted right then, and the live backend never loses one it reads (its state reads back
// whole after every checkpoint, through a cache too small to keep it). Once the run ends
// and its backend is closed, the remote holds exactly the retained checkpoint's tables:
// nothing of a completed checkpoint stays forever. A second job then restores that
// checkpoint in NO_CLAIM mode (not owned): its tables are never deleted by that run, whose
// own tables retention reclaims as before, and the checkpoint still restores afterwards.
func TestRetentionReclaimsAdoptedTables(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	storage := fsstorage.New()
	if err := storage.Configure(ctx, sdk.Options{sdk.OptionCheckpointDir: filepath.Join(root, "checkpoints")}); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(root, "remote")
	r := newDisaggRun(t, storage, "job", remote)
	r.kb = sdktest.OpenKeyed(t, r.backend(), r.p)
	m := sdktest.Model{}
	const rounds = 5
	var last *checkpoint.Completed
	reclaimed := 0
	for n := int64(1); n <= rounds; n++ {
		sdktest.Fill(t, r.kb, m, r.p.KeyGroups, 30000, fmt.Sprintf("v%d", n)) // every key again: compactions follow
		last = r.checkpoint(n, false)
		reclaimed = r.checkRetention(n, nil)
		sdktest.CheckContents(t, r.kb, m)
	}
	if reclaimed == 0 {
		t.Fatalf("after %d checkpoints no table of a checkpoint was deleted: the test's compactions did not replace any", rounds)
	}
	atLast := maps.Clone(m)
	if err := r.kb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.store.DiscardDeferred(ctx); err != nil { // the end of the attempt
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(r.onDisk())), r.refs[rounds]; !slices.Equal(got, want) {
		t.Fatalf("after the run the remote holds %v, want exactly the tables of retained checkpoint %d: %v", got, rounds, want)
	}

	// A second job restores the checkpoint without owning it (NO_CLAIM).
	r2 := newDisaggRun(t, storage, "job2", remote)
	if err := r2.store.Add(ctx, &checkpoint.Completed{Location: last.Location, Metadata: last.Metadata, Owned: false}); err != nil {
		t.Fatal(err)
	}
	restored := r.refs[rounds]
	r2.kb = sdktest.OpenRestored(t, r2.backend(), r2.p, last.Metadata.Operators[0].Subtasks[0].Keyed, checkpoint.Reader{Access: r2.access})
	r2.checkpoint(rounds+1, true) // Full until a checkpoint of the run completes
	for _, p := range r2.refs[rounds+1] {
		if slices.Contains(restored, p) {
			t.Fatalf("the Full checkpoint after the NO_CLAIM restore references %s, a table of the restored checkpoint", p)
		}
	}
	for n := int64(rounds + 2); n <= rounds+5; n++ {
		sdktest.Fill(t, r2.kb, m, r2.p.KeyGroups, 30000, fmt.Sprintf("w%d", n))
		r2.checkpoint(n, false)
		r2.checkRetention(n, restored)
		sdktest.CheckContents(t, r2.kb, m)
	}
	if err := r2.kb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r2.store.DiscardDeferred(ctx); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(restored), r2.refs[rounds+5]...)))
	if got := slices.Sorted(maps.Keys(r2.onDisk())); !slices.Equal(got, want) {
		t.Fatalf("after the second run the remote holds %v, want the restored checkpoint's tables and those of the second run's retained checkpoint: %v", got, want)
	}
	again := sdktest.OpenRestored(t, r.backend(), r.p, last.Metadata.Operators[0].Subtasks[0].Keyed, checkpoint.Reader{Access: r.access})
	sdktest.CheckContents(t, again, atLast)
}

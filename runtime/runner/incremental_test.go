package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/sdk"
)

// incFixture runs the aggregate job on leveldb with incremental checkpoints and fsstorage,
// both in-process.
type incFixture struct {
	dir      string // checkpoint directory
	jobDir   string // <dir>/<job>
	local    string // leveldb working directory
	retained int
	interval time.Duration
	storage  func() sdk.Plugin // nil: fsstorage
	extra    string            // more configuration lines
	// cancelJob makes the onCheckpoint stop a job cancellation (runner stop without a
	// savepoint: runner.ErrJobCancelled), to which the checkpoint retention applies;
	// otherwise it is a suspension (a signal), which keeps every checkpoint.
	cancelJob bool
}

const incJob = "inc"

func newIncFixture(t *testing.T, retained int) *incFixture {
	root := t.TempDir()
	f := &incFixture{dir: filepath.Join(root, "checkpoints"), local: filepath.Join(root, "leveldb"), retained: retained, interval: 20 * time.Millisecond}
	f.jobDir = filepath.Join(f.dir, incJob)
	return f
}

// run runs the job over records events of keys keys, rate records/s (0: unlimited), from
// ("" or a pointer or runner.FromLatest); onCheckpoint sees each completed checkpoint and
// may cancel the run by returning true.
func (f *incFixture) run(t *testing.T, records, keys int64, rate float64, from string, onCheckpoint func(c *checkpoint.Completed) (stop bool)) error {
	t.Helper()
	conf := fmt.Sprintf(`state.backend.type: leveldb
state.backend.leveldb.localdir: %s
execution.checkpointing.storage: filesystem
execution.checkpointing.dir: %s
execution.checkpointing.incremental: true
execution.checkpointing.num-retained: %d
execution.checkpointing.interval: %s
execution.checkpointing.data-inline-threshold: 0
restart-strategy.type: none
job.name: %s
%s`, f.local, f.dir, f.retained, f.interval, incJob, f.extra)
	plugins := builtin.Constructors()
	if f.storage != nil {
		plugins[config.FSStorage] = f.storage
	}
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancel := func() {
		if f.cancelJob {
			cancelCause(runner.ErrJobCancelled)
		}
		cancelCause(context.Canceled)
	}
	defer cancel()
	resolved, host := inProcessConfig(ctx, t, conf, plugins)
	defer host.Close()
	job, err := jobs.Aggregate(jobs.Spec{Name: incJob, Parallelism: 2, Keys: keys, Records: records, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	x := &runner.Executor{Config: resolved, Host: host, Logger: hclog.NewNullLogger(), OnCheckpoint: func(c *checkpoint.Completed) {
		mu.Lock()
		defer mu.Unlock()
		if onCheckpoint != nil && onCheckpoint(c) {
			cancel()
		}
	}}
	err = x.Run(ctx, job, from)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// completedOnDisk returns the metadata of the job's completed checkpoints on disk.
func (f *incFixture) completedOnDisk(t *testing.T) []*checkpoint.Metadata {
	t.Helper()
	ctx := context.Background()
	st := fsstorage.New()
	if err := st.Configure(ctx, sdk.Options{"dir": f.dir}); err != nil {
		t.Fatal(err)
	}
	access, err := st.CreateCheckpointStorage(ctx, incJob)
	if err != nil {
		t.Fatal(err)
	}
	locs, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*checkpoint.Metadata
	for _, l := range locs {
		m, err := checkpoint.Load(ctx, access, l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// sharedFiles returns the files in <job>/shared, by file URI.
func (f *incFixture) sharedFiles(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(f.jobDir, "shared"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		out["file://"+filepath.ToSlash(filepath.Join(f.jobDir, "shared", e.Name()))] = true
	}
	return out
}

// checkNoOrphans runs checkReferencedExist and then fails, saying "shared file <f>
// <orphan>", for every shared file no completed checkpoint references.
func (f *incFixture) checkNoOrphans(t *testing.T, when, orphan string) {
	t.Helper()
	refs := f.checkReferencedExist(t, when)
	for file := range f.sharedFiles(t) {
		if !refs[file] {
			t.Errorf("shared file %s %s", file, orphan)
		}
	}
}

// checkReferencedExist fails when a completed checkpoint on disk references a shared file
// that is gone; it returns the refs the checkpoints reference.
func (f *incFixture) checkReferencedExist(t *testing.T, when string) map[string]bool {
	t.Helper()
	files := f.sharedFiles(t)
	refs := map[string]bool{}
	for _, m := range f.completedOnDisk(t) {
		for ref := range checkpoint.SharedRefs(m) {
			refs[ref] = true
			if !files[ref] {
				t.Fatalf("%s: checkpoint %d references shared file %s, which is gone", when, m.CheckpointID, ref)
			}
		}
	}
	return refs
}

// dirUsage counts the files and bytes under dir.
func dirUsage(t *testing.T, dir string) (files int, bytes int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, bytes
}

// TestIncrementalSharedStateSurvivesRetentionAndRestore: with num-retained 1, every
// completed checkpoint's shared files stay while it is retained, during a run and across
// a restore (--from latest) that continues the chain; checkpoints are incremental and add
// less than their size; at the end no unreferenced shared file is left.
func TestIncrementalSharedStateSurvivesRetentionAndRestore(t *testing.T) {
	f := newIncFixture(t, 1)
	var seen []*checkpoint.Metadata
	incremental := 0
	// Each run goes on until the checkpoints it needs have completed, however slowly a
	// busy machine takes them: the job itself never ends (its generator is unbounded).
	check := func(enough func() bool) func(c *checkpoint.Completed) bool {
		return func(c *checkpoint.Completed) bool {
			f.checkReferencedExist(t, fmt.Sprintf("after checkpoint %d", c.Metadata.CheckpointID))
			seen = append(seen, c.Metadata)
			if c.Metadata.Incremental && c.Metadata.AddedBytes < c.Metadata.StateSize() {
				incremental++
			}
			return enough()
		}
	}
	const unbounded = 1 << 40
	if err := f.run(t, unbounded, 3000, 20000, "", check(func() bool { return len(seen) >= 5 && incremental >= 3 })); err != nil {
		t.Fatalf("first run: %v", err)
	}
	first := len(seen)
	last := seen[len(seen)-1]
	lastRefs := checkpoint.SharedRefs(last)
	f.checkReferencedExist(t, "after the first run")

	if err := f.run(t, unbounded, 3000, 20000, runner.FromLatest, check(func() bool { return len(seen) >= first+5 })); err != nil {
		t.Fatalf("run --from latest: %v", err)
	}
	// The chain goes on after the restore: some checkpoint of the second run references
	// the restored checkpoint's shared files. (The very first may legitimately start a new
	// base when the restored chain was at its limit; plugins/leveldb's
	// TestIncrementalRestoreContinuesChain checks continuation deterministically.)
	kept := 0
	for _, m := range seen[first:] {
		for ref := range checkpoint.SharedRefs(m) {
			if lastRefs[ref] {
				kept++
			}
		}
		if m.AddedBytes == m.StateSize() {
			break // a new base: later checkpoints build on it
		}
	}
	if kept == 0 && seen[first].AddedBytes < seen[first].StateSize() {
		t.Fatalf("the first checkpoint after the restore is incremental but references none of the restored checkpoint's shared files")
	}
	f.checkNoOrphans(t, "after the second run", "is referenced by no completed checkpoint")
	// The latest checkpoint restores: its state reads back with sizes and checksums, and the
	// restored job completes a checkpoint of its own.
	if err := f.run(t, unbounded, 3000, 20000, runner.FromLatest, check(func() bool { return true })); err != nil {
		t.Fatalf("run --from latest after the second run: %v", err)
	}
}

// TestCheckpointDirectoryStaysBounded takes 200 checkpoints with num-retained 2 and
// checks that the job's checkpoint directory never holds more than a small constant of
// files and bytes.
func TestCheckpointDirectoryStaysBounded(t *testing.T) {
	f := newIncFixture(t, 2)
	f.interval = 5 * time.Millisecond
	const want = 200
	var n, maxFiles int
	var maxBytes, maxState int64
	err := f.run(t, 1<<40, 2000, 5000, "", func(c *checkpoint.Completed) bool {
		n++
		files, bytes := dirUsage(t, f.jobDir)
		maxFiles, maxBytes = max(maxFiles, files), max(maxBytes, bytes)
		maxState = max(maxState, c.Metadata.StateSize())
		return n >= want
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < want {
		t.Fatalf("took %d checkpoints, want %d", n, want)
	}
	files, bytes := dirUsage(t, f.jobDir)
	t.Logf("%d checkpoints: at most %d files and %d bytes in %s (largest checkpoint %d bytes); at the end %d files, %d bytes", n, maxFiles, maxBytes, f.jobDir, maxState, files, bytes)
	// Two retained checkpoints of two subtasks, each a chain of at most 17 files, plus
	// the metadata, the checkpoint in progress and one generation of deferred discards.
	if maxFiles > 120 {
		t.Fatalf("the checkpoint directory held up to %d files; want a bound independent of the number of checkpoints", maxFiles)
	}
	if maxBytes > 8*maxState+1<<20 {
		t.Fatalf("the checkpoint directory held up to %d bytes for checkpoints of at most %d bytes", maxBytes, maxState)
	}
	chk := 0
	entries, _ := os.ReadDir(f.jobDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "chk-") {
			chk++
		}
	}
	if chk > 2 {
		t.Fatalf("%d chk-N directories left with num-retained 2", chk)
	}
	f.checkNoOrphans(t, "at the end", "is referenced by no completed checkpoint")
}

// TestLeftoversOfAnInterruptedCheckpointAreRemovedOnStart simulates a crash in the middle
// of a checkpoint: a shared file no completed checkpoint references and a chk-N directory
// without metadata. Starting the job again removes both and keeps the files completed
// checkpoints reference.
func TestLeftoversOfAnInterruptedCheckpointAreRemovedOnStart(t *testing.T) {
	f := newIncFixture(t, 2)
	if err := f.run(t, 20000, 1000, 40000, "", nil); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(f.jobDir, "shared", "orphan-upload")
	if err := os.WriteFile(orphan, []byte("bytes of a checkpoint that never completed"), 0o644); err != nil {
		t.Fatal(err)
	}
	incomplete := filepath.Join(f.jobDir, "chk-999")
	if err := os.MkdirAll(incomplete, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(incomplete, "state"), []byte("exclusive state"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := f.checkReferencedExist(t, "before the restart")
	if len(before) == 0 {
		t.Fatal("the completed checkpoints reference no shared file")
	}
	if err := f.run(t, 20000, 1000, 0, runner.FromLatest, nil); err != nil {
		t.Fatalf("restart: %v", err)
	}
	for _, p := range []string{orphan, incomplete} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the restart (stat: %v)", p, err)
		}
	}
	f.checkReferencedExist(t, "after the restart")
}

// TestAbortedCheckpointsLeaveNoFiles makes every third checkpoint fail half way (one
// subtask uploaded, the other fails) and checks that nothing of them stays.
func TestAbortedCheckpointsLeaveNoFiles(t *testing.T) {
	f := newIncFixture(t, 2)
	fs := &flakyStorage{Storage: fsstorage.New()}
	f.storage = func() sdk.Plugin { return fs }
	f.extra = "execution.checkpointing.tolerable-failed-checkpoints: 1000\n"
	completed := 0
	err := f.run(t, 1<<40, 2000, 20000, "", func(c *checkpoint.Completed) bool {
		completed++
		return completed >= 12
	})
	if err != nil {
		t.Fatal(err)
	}
	if fs.failed() == 0 {
		t.Fatal("no checkpoint failed: the test tested nothing")
	}
	f.checkNoOrphans(t, "at the end", "of a failed checkpoint is left")
	entries, _ := os.ReadDir(f.jobDir)
	done := map[string]bool{}
	for _, m := range f.completedOnDisk(t) {
		done[fmt.Sprintf("chk-%d", m.CheckpointID)] = true
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "chk-") && !done[e.Name()] {
			t.Errorf("directory %s of a failed checkpoint is left", e.Name())
		}
	}
	t.Logf("%d checkpoints completed, %d streams failed on purpose", completed, fs.failed())
}

// inProcessConfig writes conf into a configuration file, opens it as an Environment whose
// plugins are plugins, in-process, and returns its resolved configuration and the host that
// serves those plugins, for the caller to close.
func inProcessConfig(ctx context.Context, t *testing.T, conf string, plugins map[string]func() sdk.Plugin) (*config.Config, *pluginhost.Host) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "flowstate.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := runner.NewEnvironment(file)
	if err != nil {
		t.Fatal(err)
	}
	env.UseInProcess(plugins)
	host := env.Host()
	resolved, err := env.Resolved(ctx, host)
	if err != nil {
		host.Close()
		t.Fatal(err)
	}
	return resolved, host
}

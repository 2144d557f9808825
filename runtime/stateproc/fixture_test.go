package stateproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
)

var bg = context.Background()

// fixture runs jobs in-process on a state backend and fsstorage, keeping every checkpoint,
// and opens their checkpoints through the same storage.
type fixture struct {
	dir         string // everything lives below it
	checkpoints string // execution.checkpointing.dir
	savepoints  string // execution.checkpointing.savepoint-dir
	backend     string // config.Hashmap or config.LevelDB
	incremental bool
	storage     *fsstorage.Storage
	access      sdk.CheckpointStorageAccess
}

func newFixture(t *testing.T, backend string, incremental bool) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, checkpoints: filepath.Join(dir, "checkpoints"), savepoints: filepath.Join(dir, "savepoints"),
		backend: backend, incremental: incremental, storage: fsstorage.New()}
	if err := f.storage.Configure(bg, sdk.Options{"dir": f.checkpoints, "savepoint-dir": f.savepoints}); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.access, err = f.storage.CreateCheckpointStorage(bg, "wc"); err != nil {
		t.Fatal(err)
	}
	return f
}

// run runs job from ("" for a fresh start), stopping it once stopAfter checkpoints
// completed (0: run to its end). It returns the checkpoints that completed, oldest first.
func (f *fixture) run(t *testing.T, job *dataflow.Job, from string, stopAfter int) ([]*checkpoint.Completed, error) {
	t.Helper()
	conf := fmt.Sprintf(`state.backend.type: %s
state.backend.leveldb.localdir: %s
execution.checkpointing.storage: filesystem
execution.checkpointing.dir: %s
execution.checkpointing.savepoint-dir: %s
execution.checkpointing.incremental: %v
execution.checkpointing.num-retained: 1000
execution.checkpointing.interval: 20ms
execution.checkpointing.data-inline-threshold: 0
restart-strategy.type: none
job.name: %s
`, f.backend, filepath.Join(f.dir, "leveldb"), f.checkpoints, f.savepoints, f.incremental, job.Name)
	file := filepath.Join(t.TempDir(), "flowstate.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := runner.NewEnvironment(file)
	if err != nil {
		t.Fatal(err)
	}
	env.UseInProcess(builtin.Constructors())
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	host := env.Host()
	defer host.Close()
	resolved, err := env.Resolved(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var done []*checkpoint.Completed
	x := &runner.Executor{Config: resolved, Host: host, Logger: hclog.NewNullLogger(), OnCheckpoint: func(c *checkpoint.Completed) {
		mu.Lock()
		defer mu.Unlock()
		done = append(done, c)
		if stopAfter > 0 && len(done) >= stopAfter {
			cancel()
		}
	}}
	err = x.Run(ctx, job, from)
	mu.Lock()
	defer mu.Unlock()
	if errors.Is(err, context.Canceled) && stopAfter > 0 {
		err = nil
	}
	return done, err
}

// open opens the checkpoint at pointer.
func (f *fixture) open(t *testing.T, pointer string) *stateproc.Checkpoint {
	t.Helper()
	c, err := stateproc.Open(bg, f.storage, f.access, pointer)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wordCount is a word count over generated text and the counts its input holds.
type wordCount struct {
	input, output string
	expected      map[string]int64
}

func newWordCount(t *testing.T, dir string, size int) *wordCount {
	t.Helper()
	w := &wordCount{input: filepath.Join(dir, "input.txt"), output: filepath.Join(dir, "out")}
	if err := wordcheck.WriteText(w.input, size, 3000, 5); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.expected, err = wordcheck.Expected(w.input); err != nil {
		t.Fatal(err)
	}
	return w
}

// job returns the word count job with maxParallelism key groups (0: the default), at rate
// lines per second (0: unlimited).
func (w *wordCount) job(t *testing.T, maxParallelism int, rate float64) *dataflow.Job {
	t.Helper()
	j, err := jobs.WordCount(jobs.Spec{Name: "wc", Parallelism: 2, MaxParallelism: maxParallelism, Input: w.input, Output: w.output, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// wordCountRun is a word count that ran on a fixture, and the checkpoints it completed.
type wordCountRun struct {
	*fixture
	*wordCount
	done []*checkpoint.Completed
}

// runWordCount runs a word count over size bytes of text at rate lines per second (0:
// unlimited) on backend, stopping it once stopAfter checkpoints completed (0: at its end).
func runWordCount(t *testing.T, backend string, incremental bool, size int, rate float64, stopAfter int) *wordCountRun {
	t.Helper()
	f := newFixture(t, backend, incremental)
	w := newWordCount(t, f.dir, size)
	done, err := f.run(t, w.job(t, 0, rate), "", stopAfter)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) == 0 {
		t.Fatal("no checkpoint completed")
	}
	return &wordCountRun{fixture: f, wordCount: w, done: done}
}

// last opens the newest checkpoint the run completed.
func (r *wordCountRun) last(t *testing.T) *stateproc.Checkpoint {
	t.Helper()
	return r.open(t, r.done[len(r.done)-1].Location.ExternalPointer)
}

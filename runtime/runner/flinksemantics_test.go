package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/sdk"
)

// TestRetentionOnCancellation cancels a run after three checkpoints (as runner stop without
// a savepoint does): DELETE_ON_CANCELLATION and Flink's default
// NO_EXTERNALIZED_CHECKPOINTS delete the job's checkpoints and their shared files,
// RETAIN_ON_CANCELLATION keeps them whole.
func TestRetentionOnCancellation(t *testing.T) {
	for _, tc := range []struct {
		retention string // "" for Flink's default
		kept      bool
	}{{"DELETE_ON_CANCELLATION", false}, {"", false}, {"RETAIN_ON_CANCELLATION", true}} {
		t.Run(tc.retention, func(t *testing.T) {
			f := newIncFixture(t, 2)
			f.cancelJob = true
			if tc.retention != "" {
				f.extra = config.KeyRetention + ": " + tc.retention + "\n"
			}
			completed := 0
			if err := f.run(t, 1<<40, 2000, 20000, "", func(*checkpoint.Completed) bool { completed++; return completed >= 3 }); err != nil {
				t.Fatal(err)
			}
			onDisk := f.completedOnDisk(t)
			shared := f.sharedFiles(t)
			if !tc.kept {
				if len(onDisk) != 0 || len(shared) != 0 {
					t.Fatalf("after the cancellation %d checkpoints and %d shared files are left, want none", len(onDisk), len(shared))
				}
				entries, _ := os.ReadDir(f.jobDir)
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), "chk-") {
						t.Errorf("directory %s left", e.Name())
					}
				}
				return
			}
			if len(onDisk) == 0 {
				t.Fatal("RETAIN_ON_CANCELLATION: no checkpoint left after the cancellation")
			}
			f.checkNoOrphans(t, "after the cancellation", "is referenced by no completed checkpoint")
			if err := f.run(t, 20000, 2000, 0, runner.FromLatest, nil); err != nil {
				t.Fatalf("--from latest after a cancellation that kept the checkpoints: %v", err)
			}
		})
	}
}

// fileRefs returns the refs of every state file m references.
func fileRefs(m *checkpoint.Metadata) map[string]bool {
	out := map[string]bool{}
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, kh := range st.Keyed {
				for _, f := range kh.Files {
					if f.Handle.Ref != "" {
						out[f.Handle.Ref] = true
					}
				}
			}
		}
	}
	return out
}

// restoredFixture runs the incremental job to its end and returns the fixture and its last
// checkpoint, to restore from by pointer.
func restoredFixture(t *testing.T, extra string) (*incFixture, *checkpoint.Completed) {
	t.Helper()
	f := newIncFixture(t, 1)
	f.extra = extra
	var last *checkpoint.Completed
	if err := f.run(t, 30000, 2000, 40000, "", func(c *checkpoint.Completed) bool { last = c; return false }); err != nil {
		t.Fatal(err)
	}
	if last == nil || len(fileRefs(last.Metadata)) == 0 {
		t.Fatal("the first run left no checkpoint with state files to restore")
	}
	return f, last
}

// TestNoClaimRestore restores a checkpoint by pointer under Flink's default claim mode
// NO_CLAIM: the first checkpoint after the restore references none of the restored
// checkpoint's files (it is full, though checkpoints are incremental), and the restored
// checkpoint is never deleted, though num-retained is 1.
func TestNoClaimRestore(t *testing.T) {
	f, restored := restoredFixture(t, "")
	restoredRefs := fileRefs(restored.Metadata)
	var first *checkpoint.Metadata
	if err := f.run(t, 60000, 2000, 40000, restored.Location.ExternalPointer, func(c *checkpoint.Completed) bool {
		if first == nil {
			first = c.Metadata
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if first == nil {
		t.Fatal("no checkpoint after the restore")
	}
	for ref := range fileRefs(first) {
		if restoredRefs[ref] {
			t.Fatalf("the first checkpoint after a NO_CLAIM restore (%d) references %s of the restored checkpoint %d",
				first.CheckpointID, ref, restored.Metadata.CheckpointID)
		}
	}
	if _, err := os.Stat(filepath.Join(f.jobDir, fmt.Sprintf("chk-%d", restored.Metadata.CheckpointID), "_metadata")); err != nil {
		t.Fatalf("the restored checkpoint was deleted under NO_CLAIM: %v", err)
	}
	shared := f.sharedFiles(t)
	for ref := range restoredRefs {
		if strings.Contains(ref, "/shared/") && !shared[ref] {
			t.Fatalf("a shared file of the restored checkpoint was deleted under NO_CLAIM: %s", ref)
		}
	}
}

// TestClaimRestore restores by pointer under CLAIM: the run owns the restored checkpoint,
// so retention (num-retained 1) deletes it once a newer one completed, and every file the
// kept checkpoints reference stays.
func TestClaimRestore(t *testing.T) {
	f, restored := restoredFixture(t, config.KeyClaimMode+": CLAIM\n")
	completed := 0
	if err := f.run(t, 60000, 2000, 40000, restored.Location.ExternalPointer, func(*checkpoint.Completed) bool { completed++; return false }); err != nil {
		t.Fatal(err)
	}
	if completed == 0 {
		t.Fatal("no checkpoint after the restore")
	}
	if _, err := os.Stat(filepath.Join(f.jobDir, fmt.Sprintf("chk-%d", restored.Metadata.CheckpointID))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the claimed checkpoint was not deleted by retention (stat: %v)", err)
	}
	f.checkNoOrphans(t, "after the claimed restore", "is referenced by no completed checkpoint")
}

// failingBackend is hashmap whose keyed backends fail every write, so that every attempt
// of a job fails; it counts the attempts by the keyed backends created.
type failingBackend struct {
	*hashmap.Backend
	created *atomic.Int64
}

func (b failingBackend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "failing", Version: "1"}
}

func (b failingBackend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	b.created.Add(1)
	kb, err := b.Backend.CreateKeyedStateBackend(ctx, p)
	if err != nil {
		return nil, err
	}
	return failingKeyed{kb}, nil
}

type failingKeyed struct{ sdk.KeyedStateBackend }

func (failingKeyed) Write(context.Context, []sdk.Mutation) error {
	return errors.New("injected write failure")
}

// TestRestartStrategies runs a job whose every attempt fails under each strategy and
// counts the attempts: fixed-delay restarts attempts times, failure-rate until more than
// max-failures-per-interval failures fall in the interval, exponential-delay
// attempts-before-reset-backoff times (the interval of checkpoints never lets it reset),
// none never. The ordering of exponential-delay's waits is checked in runtime/restart with
// an injected clock.
func TestRestartStrategies(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		attempts   int64
		key        string
	}{
		{"fixed-delay", "restart-strategy.type: fixed-delay\nrestart-strategy.fixed-delay.attempts: 2\nrestart-strategy.fixed-delay.delay: 10ms\n", 3, config.KeyRestartAttempts},
		{"failure-rate", "restart-strategy.type: failure-rate\nrestart-strategy.failure-rate.max-failures-per-interval: 3\n" +
			"restart-strategy.failure-rate.failure-rate-interval: 10min\nrestart-strategy.failure-rate.delay: 10ms\n", 4, config.KeyFailureRateMax},
		{"exponential-delay", "restart-strategy.type: exponential-delay\nrestart-strategy.exponential-delay.initial-backoff: 5ms\n" +
			"restart-strategy.exponential-delay.max-backoff: 20ms\nrestart-strategy.exponential-delay.attempts-before-reset-backoff: 4\n", 5, config.KeyExpAttempts},
		{"none", "restart-strategy.type: none\n", 1, config.KeyRestartType},
		{"fixed-delay keys without a type", "restart-strategy.fixed-delay.attempts: 1\nrestart-strategy.fixed-delay.delay: 1ms\n", 2, config.KeyRestartAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "flowstate.yaml")
			conf := "state.backend.type: failing\nexecution.checkpointing.storage: filesystem\nexecution.checkpointing.dir: " +
				filepath.Join(t.TempDir(), "ck") + "\nexecution.checkpointing.interval: 1h\n" + tc.conf
			if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			env, err := runner.NewEnvironment(file)
			if err != nil {
				t.Fatal(err)
			}
			var created atomic.Int64
			plugins := builtin.Constructors()
			plugins["failing"] = func() sdk.Plugin { return failingBackend{hashmap.New(), &created} }
			env.UseInProcess(plugins)
			env.SetLogger(hclog.NewNullLogger())
			job, err := jobs.Aggregate(jobs.Spec{Name: "agg", Parallelism: 1, Keys: 10, Records: 1000})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound, not a wait
			defer cancel()
			err = env.Execute(ctx, job, "")
			if err == nil || !strings.Contains(err.Error(), "injected write failure") || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("want the job to fail naming %s and the cause, got %v", tc.key, err)
			}
			if got := created.Load(); got != tc.attempts {
				t.Fatalf("%d attempts, want %d (%d restarts): %v", got, tc.attempts, tc.attempts-1, err)
			}
		})
	}
}

// TestRetentionInCode: the Environment sets the retention as Flink's CheckpointConfig does,
// over the file, and refuses a value Flink does not have.
func TestRetentionInCode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flowstate.yaml")
	if err := os.WriteFile(file, []byte(config.KeyRetention+": DELETE_ON_CANCELLATION\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]string{"retain_on_cancellation": config.RetainOnCancel, "KEEP": ""} {
		env, err := runner.NewEnvironment(file)
		if err != nil {
			t.Fatal(err)
		}
		env.UseInProcess(builtin.Constructors())
		env.CheckpointConfig().SetExternalizedCheckpointRetention(value)
		host := env.Host()
		c, err := env.Resolved(context.Background(), host)
		host.Close()
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), config.KeyRetention+" set in code") {
				t.Errorf("%s: want an error naming the key, got %v", value, err)
			}
			continue
		}
		if err != nil || c.Checkpointing.Retention != want {
			t.Errorf("%s: retention %v, error %v", value, c, err)
		}
	}
}

// hourlyRestarts returns a context of a minute, a directory and an executor's resolved
// configuration and plugin host, with checkpoints in the directory and a restart strategy
// that waits an hour before each restart: a run that fails before the context ends did not
// retry.
func hourlyRestarts(t *testing.T) (context.Context, string, *config.Config, *pluginhost.Host) {
	t.Helper()
	root := t.TempDir()
	conf := fmt.Sprintf(`state.backend.type: hashmap
execution.checkpointing.storage: filesystem
execution.checkpointing.dir: %s
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 1000
restart-strategy.fixed-delay.delay: 1h
job.name: %s
`, filepath.Join(root, "checkpoints"), incJob)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	resolved, host := inProcessConfig(ctx, t, conf, builtin.Constructors())
	t.Cleanup(func() { host.Close() })
	return ctx, root, resolved, host
}

// TestFromMissingPointerFailsAtOnce: a --from pointer the storage says does not exist, or
// is no checkpoint, is a mistake no restart can fix, as Flink refuses a missing savepoint path at submission. The
// run ends with an error naming the pointer before the restart strategy's first delay
// (an hour here): a retried failure would reach the test's deadline instead.
func TestFromMissingPointerFailsAtOnce(t *testing.T) {
	ctx, root, resolved, host := hourlyRestarts(t)
	job, err := jobs.Aggregate(jobs.Spec{Name: incJob, Parallelism: 1, Keys: 10, Records: 100})
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint that is not there, and a file that is no checkpoint (an operator's
	// slip: the job's input passed as --from).
	notCheckpoint := filepath.Join(root, "input.txt")
	if err := os.WriteFile(notCheckpoint, []byte("words\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{filepath.Join(root, "checkpoints", incJob, "chk-7"), notCheckpoint} {
		x := &runner.Executor{Config: resolved, Host: host, Logger: hclog.NewNullLogger()}
		err = x.Run(ctx, job, from)
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), from) {
			t.Fatalf("Run from %s = %v (deadline passed: %v); want an error at once naming it", from, err, ctx.Err() != nil)
		}
	}
}

// TestGoJobNameFollowsTheRule: a job built in Go whose name cannot be its directory in the
// checkpoint storage (config.CheckJobName) is refused before the run starts, naming the
// name and the rule, as job.name is when a configuration loads.
func TestGoJobNameFollowsTheRule(t *testing.T) {
	ctx, root, resolved, host := hourlyRestarts(t)
	for _, name := range []string{"a/b", "..", strings.Repeat("n", 300)} {
		job, err := jobs.Aggregate(jobs.Spec{Name: name, Parallelism: 1, Keys: 10, Records: 100})
		if err != nil {
			t.Fatal(err)
		}
		x := &runner.Executor{Config: resolved, Host: host, Logger: hclog.NewNullLogger()}
		err = x.Run(ctx, job, "")
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), fmt.Sprintf("job %q", name)) || !strings.Contains(err.Error(), "job name") {
			t.Fatalf("Run of a job named %q = %v (deadline passed: %v); want an error at once naming it and the rule", name, err, ctx.Err() != nil)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("the refused runs created %v", entries)
	}
}

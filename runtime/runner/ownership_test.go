package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// TestLostLeaseStopsTheRun lets another holder take the job's lease in its checkpoint
// storage while the job runs (as a runner whose clock runs ahead would): the run stops
// with an error wrapping ownership.ErrLost that names the new holder, releases its lease on
// the output directory, and leaves the new holder's record alone.
func TestLostLeaseStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	input, output := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out")
	if err := wordcheck.WriteText(input, 1<<20, 2000, 3); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "config.yaml")
	os.WriteFile(file, []byte("state.backend.type: hashmap\nexecution.checkpointing.storage: filesystem\n"+
		"execution.checkpointing.dir: "+filepath.Join(dir, "checkpoints")+"\nexecution.checkpointing.interval: 100ms\n"+
		"job.lease.timeout: 10s\n"), 0o644)
	env, err := runner.NewEnvironment(file)
	if err != nil {
		t.Fatal(err)
	}
	env.UseInProcess(builtin.Constructors())
	job, err := jobs.WordCount(jobs.Spec{Name: "wc", Parallelism: 1, MaxParallelism: 128, BatchSize: 256, Input: input, Output: output, Rate: 2000})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- env.Execute(context.Background(), job, "") }()

	storage := filelease.New(filepath.Join(dir, "checkpoints", "wc", "_lease"))
	var cur sdk.LeaseRecord
	testwait.For(t, "the run's lease in its checkpoint storage", time.Minute, func() error {
		ended := len(done) > 0 // first: a run that ended before wrote all it will write
		if cur, err = storage.ReadLease(context.Background()); err != nil && ended {
			return testwait.Stop(fmt.Errorf("the run ended: %w", err))
		}
		return err
	})
	held, err := ownership.DecodeRecord(cur.Data)
	if err != nil {
		t.Fatal(err)
	}
	thief := ownership.Record{Holder: ownership.Holder{Job: "wc", Host: "elsewhere", PID: 4242, Instance: "thief", Since: time.Now()},
		Epoch: held.Epoch + 1, Renewed: time.Now().Add(time.Hour), TTLMillis: 10000, Seq: held.Seq + 100}
	data, err := json.Marshal(thief)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := storage.WriteLease(context.Background(), data, cur.Version)
		if err == nil {
			break
		}
		if !errors.Is(err, sdk.ErrConflict) {
			t.Fatal(err)
		}
		cur, _ = storage.ReadLease(context.Background()) // a renewal came first
	}
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run went on after its lease was taken")
	}
	if !errors.Is(err, ownership.ErrLost) || !strings.Contains(err.Error(), "pid 4242 on elsewhere") {
		t.Fatalf("Execute after the lease was taken = %v; want ownership.ErrLost naming pid 4242 on elsewhere", err)
	}
	if r, _ := storage.ReadLease(context.Background()); string(r.Data) != string(data) {
		t.Fatalf("the run overwrote the new holder's record: %s", r.Data)
	}
	out, err := filelease.New(filepath.Join(output, ownership.OutputLeaseFile)).ReadLease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ownership.DecodeRecord(out.Data); err != nil || !r.Released {
		t.Fatalf("the output directory's lease after the run: %+v, %v; want it released", r, err)
	}
}

// TestCheckpointsRecordTheLeaseEpoch: every checkpoint's metadata records the epoch of the
// lease its run holds on the job's record in the checkpoint storage: 1 for the first run,
// 2 for the run that resumes it with --from latest, as the record says.
func TestCheckpointsRecordTheLeaseEpoch(t *testing.T) {
	f := newIncFixture(t, 10)
	for run, from := range []string{"", runner.FromLatest} {
		n := 0
		err := f.run(t, 1<<40, 50, 2000, from, func(c *checkpoint.Completed) bool {
			if c.Metadata.Epoch != int64(run+1) {
				t.Errorf("run %d: checkpoint %d records epoch %d; want %d", run+1, c.Metadata.CheckpointID, c.Metadata.Epoch, run+1)
			}
			n++
			return n == 2
		})
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		lease, err := filelease.New(filepath.Join(f.jobDir, "_lease")).ReadLease(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec, err := ownership.DecodeRecord(lease.Data)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Epoch != int64(run+1) {
			t.Fatalf("after run %d the lease record is at epoch %d; want %d", run+1, rec.Epoch, run+1)
		}
	}
	epochs := map[int64]int{}
	for _, m := range f.completedOnDisk(t) {
		epochs[m.Epoch]++
	}
	if epochs[1] == 0 || epochs[2] == 0 || len(epochs) != 2 {
		t.Fatalf("checkpoints on disk by epoch: %v; want those of epochs 1 and 2 only", epochs)
	}
}

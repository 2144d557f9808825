package dataflow_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/sdk"
)

// stuckLocationAccess is a storage whose location set-up for one checkpoint hangs until
// its context ends, as a call into a stopped plugin process does.
type stuckLocationAccess struct {
	sdk.CheckpointStorageAccess
	stuckID int64
	once    sync.Once
	hung    chan struct{}
}

func (a *stuckLocationAccess) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	if id == a.stuckID {
		a.once.Do(func() { close(a.hung) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return a.CheckpointStorageAccess.InitializeLocationForCheckpoint(ctx, id)
}

// TestLocationSetUpIsBoundedByTheCheckpointTimeout: a storage that never finishes setting
// up a checkpoint's location no longer stalls the coordinator: the checkpoint expires after
// execution.checkpointing.timeout, the next ones complete and the output is exact.
func TestLocationSetUpIsBoundedByTheCheckpointTimeout(t *testing.T) {
	f := newFixture(t, 1<<20, nil)
	access := &stuckLocationAccess{CheckpointStorageAccess: f.store.Access(), stuckID: 2, hung: make(chan struct{})}
	f.store = checkpoint.NewStore(access, 2)
	var log testwait.Buffer
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.Timeout = 300 * time.Millisecond
	env.TolerableFailures = 5
	env.Logger = hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Warn})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := dataflow.Run(ctx, f.job(t, 2), env); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	select {
	case <-access.hung:
	default:
		t.Fatal("the job finished before checkpoint 2 was triggered")
	}
	want := "checkpoint 2 expired after 300ms (execution.checkpointing.timeout) while its location was initialized"
	if !strings.Contains(log.String(), want) {
		t.Fatalf("log does not say %q:\n%s", want, log.String())
	}
	if stats.Checkpoints < 1 {
		t.Fatalf("no checkpoint completed after the stuck one")
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
}

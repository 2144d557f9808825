package jetstream

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// kvBucket creates bucket with replicas on js. A cluster just started may refuse an R3
// bucket for a moment, its meta leader not knowing every peer yet ("no suitable peers for
// placement", JetStream error 10005): the creation is tried again.
func kvBucket(t *testing.T, js jetstream.JetStream, bucket string, replicas int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("KV bucket %s (R%d) to be created", bucket, replicas), 30*time.Second, func() error {
		_, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: bucket, Replicas: replicas, Storage: jetstream.FileStorage})
		var api *jetstream.APIError
		if errors.As(err, &api) && api.ErrorCode == 10005 {
			return err
		}
		if err != nil {
			return testwait.Stop(fmt.Errorf("create KV bucket %s: %w", bucket, err))
		}
		return nil
	})
}

// leaseKit runs the LeaseStore conformance checks on a bucket of js: one key per job.
func leaseKit(t *testing.T, js jetstream.JetStream, bucket string, replicas int) {
	sdktest.LeaseStore(t, func(t *testing.T, job string) sdk.LeaseStore {
		l, err := OpenKVLease(context.Background(), js, bucket, "lease."+job, replicas)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func TestKVLeaseIsALeaseStore(t *testing.T) {
	ts := startServer(t)
	kvBucket(t, ts.js, "leases", 1)
	leaseKit(t, ts.js, "leases", 1)
}

// TestKVLeaseOnAReplicatedBucket runs the checks on an R3 bucket of a 3-node cluster of
// real servers, whose compare-and-swap conflicts carry another error code than a single
// node's (10164, not 10071), and whose reads must come from the stream's leader.
func TestKVLeaseOnAReplicatedBucket(t *testing.T) {
	c := natstest.StartCluster(t, 3, natstest.Options{})
	js := c.JetStream(t)
	kvBucket(t, js, "leases", 3)
	leaseKit(t, js, "leases", 3)
}

func TestKVLeaseRefusesAMissingOrUnderReplicatedBucket(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	_, err := OpenKVLease(ctx, ts.js, "nowhere", "job", 3)
	if err == nil || !strings.Contains(err.Error(), "KV bucket nowhere does not exist") || !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("a missing bucket: %v", err)
	}
	kvBucket(t, ts.js, "single", 1)
	if _, err := OpenKVLease(ctx, ts.js, "single", "job", 3); err == nil || !strings.Contains(err.Error(), "KV bucket single has 1 replicas, the configuration asks for 3") {
		t.Fatalf("an R1 bucket where R3 is asked for: %v", err)
	}
	if _, err := OpenKVLease(ctx, ts.js, "single", "a job", 1); err == nil || !strings.Contains(err.Error(), `"a job" is not a valid key`) {
		t.Fatalf("a key with a space: %v", err)
	}
	l, err := OpenKVLease(ctx, ts.js, "single", "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := l.WriteLease(ctx, []byte("a"), "")
	if err != nil {
		t.Fatal(err)
	}
	// A key deleted behind the runner's back reads as no record, and is created anew.
	kv, _ := ts.js.KeyValue(ctx, "single")
	if err := kv.Delete(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadLease(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("a deleted key: %v, want ErrNotFound", err)
	}
	if _, err := l.WriteLease(ctx, []byte("b"), v); !errors.Is(err, sdk.ErrConflict) {
		t.Fatalf("a replace of a deleted key at its old revision: %v, want ErrConflict", err)
	}
	if _, err := l.WriteLease(ctx, []byte("b"), ""); err != nil {
		t.Fatalf("a create after the delete: %v", err)
	}
}

// TestOwnershipOnKVLease runs the runner's own lease (runtime/ownership) on a KV key: a
// second holder is refused while the first lives; a holder whose process has ended on this
// machine (a runner killed with -9) is taken over at once, at the next epoch, and the
// first holder's next renewal finds it has lost the lease.
func TestOwnershipOnKVLease(t *testing.T) {
	ts := startServer(t)
	kvBucket(t, ts.js, "tasks", 1)
	ctx := context.Background()
	open := func() *KVLease {
		l, err := OpenKVLease(ctx, ts.js, "tasks", "wc.task-3", 1)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	opts := ownership.Options{TTL: 3 * time.Second, Where: "task 3 of job wc"}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := ownership.Self("wc", "")
	dead.PID = gone.Process.Pid // ended and reaped: this machine knows it is gone
	first, err := ownership.Acquire(ctx, open(), dead, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(ctx)
	if first.Record().Epoch != 1 {
		t.Fatalf("first epoch %d, want 1", first.Record().Epoch)
	}
	second, err := ownership.Acquire(ctx, open(), ownership.Self("wc", ""), opts)
	if err != nil {
		t.Fatalf("a holder whose process is gone is not taken over: %v", err)
	}
	defer second.Release(ctx)
	if prev, _, ok := second.TookOver(); !ok || second.Record().Epoch != 2 || prev.Epoch != 1 {
		t.Fatalf("takeover: epoch %d, took over %v (epoch %d); want epoch 2 over 1", second.Record().Epoch, ok, prev.Epoch)
	}
	var held *ownership.HeldError
	if _, err := ownership.Acquire(ctx, open(), ownership.Self("wc", ""), opts); !errors.As(err, &held) || held.Record.Epoch != 2 {
		t.Fatalf("a third holder while the second lives: %v, want a HeldError naming epoch 2", err)
	}
	select {
	case <-first.Lost():
	case <-time.After(4 * opts.TTL):
		t.Fatal("the first holder never learned it lost the lease")
	}
	if err := first.Check(); err == nil {
		t.Fatal("the first holder's fence still passes after the takeover")
	}
	if err := second.Check(); err != nil {
		t.Fatalf("the second holder's fence: %v", err)
	}
}

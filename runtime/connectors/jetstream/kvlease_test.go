package jetstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// kvBucket creates bucket with replicas on js.
func kvBucket(t *testing.T, js jetstream.JetStream, bucket string, replicas int) {
	t.Helper()
	if _, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: bucket, Replicas: replicas, Storage: jetstream.FileStorage}); err != nil {
		t.Fatalf("create KV bucket %s: %v", bucket, err)
	}
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

package sdktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// leaseChecks tests the optional sdk.LeaseStore, when the storage's access implements it:
// the promises LeaseStore checks, through accesses of the storage, and that the record
// outlives the job's checkpoints, the initialization of its base locations and the access
// that wrote it.
func leaseChecks(t *testing.T, factory StorageFactory) {
	ctx := context.Background()
	cs := factory(t)
	a := newAccess(t, cs, "lease")
	l, ok := a.(sdk.LeaseStore)
	if !ok {
		t.Logf("the access (%T) does not implement the optional sdk.LeaseStore: nothing to check", a)
		return
	}
	t.Run("CompareAndSwap", func(t *testing.T) {
		LeaseStore(t, func(t *testing.T, job string) sdk.LeaseStore {
			return newAccess(t, cs, "cas-"+job).(sdk.LeaseStore)
		})
	})
	v1 := mustWriteLease(t, l, []byte("holder"), "")
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	loc := checkpointLocation(t, a, 1)
	done := finalize(t, loc, []byte("metadata"))
	if err := a.DisposeCheckpoint(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := checkpointLocation(t, a, 2).DisposeOnFailure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := a.ListCompletedCheckpoints(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListCompletedCheckpoints of a job with a lease and no checkpoint = %v, %v; want nothing", got, err)
	}
	again := newAccess(t, cs, "lease").(sdk.LeaseStore)
	wantLease(t, again, "through a new access, after checkpoints were disposed of", []byte("holder"), v1)
}

// LeaseStore tests an sdk.LeaseStore implementation. open returns a store of job's record;
// calls with the same job must reach the same record, as the accesses of one job in
// different runners do, and calls with different jobs different records. It checks that a
// job without a record reads ErrNotFound; a create succeeds once; a replace succeeds only
// at the current version and yields a new one; every refused write leaves the record as
// it was; a record of sdk.MaxLeaseSize bytes is kept; and of eight racing creators or
// replacers exactly one wins.
func LeaseStore(t *testing.T, open func(t *testing.T, job string) sdk.LeaseStore) {
	ctx := context.Background()
	l := open(t, "lease")
	if r, err := l.ReadLease(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("ReadLease of a job that has no record = %+v, %v; want an error wrapping sdk.ErrNotFound", r, err)
	}
	if _, err := l.WriteLease(ctx, []byte("v0"), "no-such-version"); !errors.Is(err, sdk.ErrConflict) {
		t.Fatalf("WriteLease with a version of a record that does not exist: %v; want an error wrapping sdk.ErrConflict", err)
	}
	if _, err := l.ReadLease(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("a refused WriteLease created the record: ReadLease = %v", err)
	}
	v1 := mustWriteLease(t, l, []byte("first holder"), "")
	wantLease(t, l, "after creating it", []byte("first holder"), v1)
	if _, err := l.WriteLease(ctx, []byte("second creator"), ""); !errors.Is(err, sdk.ErrConflict) {
		t.Fatalf("creating an existing record: %v; want an error wrapping sdk.ErrConflict", err)
	}
	wantLease(t, l, "after a refused create", []byte("first holder"), v1)
	v2 := mustWriteLease(t, l, []byte("renewed"), v1)
	if v2 == v1 {
		t.Fatalf("WriteLease replaced the record and returned its old version %q", v1)
	}
	wantLease(t, open(t, "lease"), "after replacing it, through another store", []byte("renewed"), v2)
	for _, stale := range []string{v1, v2 + "x", "0"} {
		if _, err := l.WriteLease(ctx, []byte("stale writer"), stale); !errors.Is(err, sdk.ErrConflict) {
			t.Fatalf("WriteLease at version %q while the record is at %q: %v; want an error wrapping sdk.ErrConflict", stale, v2, err)
		}
	}
	wantLease(t, l, "after stale writes", []byte("renewed"), v2)
	if _, err := open(t, "lease-other").ReadLease(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("another job's ReadLease = %v; want sdk.ErrNotFound: records are per job", err)
	}
	big := bytes.Repeat([]byte{'x'}, sdk.MaxLeaseSize)
	v3 := mustWriteLease(t, l, big, v2)
	wantLease(t, l, "of sdk.MaxLeaseSize bytes", big, v3)
	t.Run("RacingReplaces", func(t *testing.T) { raceLease(t, open, "lease", v3) })
	t.Run("RacingCreates", func(t *testing.T) { raceLease(t, open, "lease-race", "") })
}

// raceLease lets eight stores of job write the record at version from at once and checks
// that exactly one wins, the others conflict, and the record holds the winner's data.
func raceLease(t *testing.T, open func(t *testing.T, job string) sdk.LeaseStore, job, from string) {
	const writers = 8
	stores := make([]sdk.LeaseStore, writers)
	for i := range stores {
		stores[i] = open(t, job)
	}
	type result struct {
		version string
		err     error
	}
	results := make([]result, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			v, err := stores[i].WriteLease(context.Background(), []byte(fmt.Sprintf("writer %d", i)), from)
			results[i] = result{v, err}
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, r := range results {
		switch {
		case r.err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both wrote the lease at version %q", winner, i, from)
		case r.err == nil:
			winner = i
		case !errors.Is(r.err, sdk.ErrConflict):
			t.Fatalf("writer %d: %v; want success or an error wrapping sdk.ErrConflict", i, r.err)
		}
	}
	if winner < 0 {
		t.Fatalf("none of %d racing writers wrote the lease at version %q", writers, from)
	}
	wantLease(t, stores[0], "after the race", []byte(fmt.Sprintf("writer %d", winner)), results[winner].version)
}

// newAccess creates the storage of job without initializing its base locations, closing
// it when t ends: the runner takes the lease before it initializes anything.
func newAccess(t *testing.T, cs sdk.CheckpointStorage, job string) sdk.CheckpointStorageAccess {
	t.Helper()
	a, err := cs.CreateCheckpointStorage(context.Background(), job)
	if err != nil {
		t.Fatalf("CreateCheckpointStorage(%q): %v", job, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func mustWriteLease(t *testing.T, l sdk.LeaseStore, data []byte, ifVersion string) string {
	t.Helper()
	v, err := l.WriteLease(context.Background(), data, ifVersion)
	if err != nil {
		t.Fatalf("WriteLease(%d bytes, ifVersion %q): %v", len(data), ifVersion, err)
	}
	if v == "" {
		t.Fatalf("WriteLease(%d bytes, ifVersion %q) returned an empty version", len(data), ifVersion)
	}
	return v
}

func wantLease(t *testing.T, l sdk.LeaseStore, when string, data []byte, version string) {
	t.Helper()
	r, err := l.ReadLease(context.Background())
	if err != nil {
		t.Fatalf("ReadLease %s: %v", when, err)
	}
	if !bytes.Equal(r.Data, data) || r.Version != version {
		t.Fatalf("ReadLease %s = %.40q at version %q; want %.40q at version %q", when, r.Data, r.Version, data, version)
	}
}

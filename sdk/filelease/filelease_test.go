package filelease_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestConformance runs the kit's lease checks: one file per job, in a directory that does
// not exist yet.
func TestConformance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	sdktest.LeaseStore(t, func(t *testing.T, job string) sdk.LeaseStore {
		return filelease.New(filepath.Join(dir, job, "_lease"))
	})
}

// TestCorruptRecord checks that a file that is not a record reads as corrupt and is never
// replaced.
func TestCorruptRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_lease")
	if err := os.WriteFile(path, []byte("{\"holder\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := filelease.New(path)
	if _, err := s.ReadLease(context.Background()); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("ReadLease of a file without the header = %v; want an error naming %s", err, path)
	}
	if _, err := s.WriteLease(context.Background(), []byte("x"), "1"); err == nil {
		t.Fatal("WriteLease replaced a corrupt record")
	}
}

// TestBusyLockEndsWithTheContext holds the lock file with flock and checks that a replace
// gives up when its context ends instead of blocking.
func TestBusyLockEndsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_lease")
	s := filelease.New(path)
	v, err := s.WriteLease(context.Background(), []byte("a"), "")
	if err != nil {
		t.Fatal(err)
	}
	unlock := holdLock(t, path+".lock")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.WriteLease(ctx, []byte("b"), v); err == nil || !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("WriteLease while the lock is held = %v; want a busy lock error", err)
	}
	unlock()
	if _, err := s.WriteLease(context.Background(), []byte("b"), v); err != nil {
		t.Fatalf("WriteLease after the lock was released: %v", err)
	}
}

package control

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedTargetNeverReachesTheJob: a savepoint request whose target the check refuses
// is answered with the check's reason, and the job never sees it.
func TestRefusedTargetNeverReachesTheJob(t *testing.T) {
	s, c, _ := listenWith(t, Options{CheckTarget: func(target, proof string) error {
		return errors.New("refusing savepoint target " + target + " with proof " + proof)
	}})
	_, err := c.TriggerSavepoint(context.Background(), SavepointRequest{Job: "wc", Target: "/elsewhere", Proof: "p"})
	if err == nil || !strings.Contains(err.Error(), "refusing savepoint target /elsewhere with proof p") {
		t.Fatalf("TriggerSavepoint = %v; want the check's refusal", err)
	}
	// The handler answered, so it is not blocked sending the request to the job (the
	// channel is unbuffered): a request that reached the job would be waiting here.
	select {
	case req := <-s.Savepoints():
		t.Fatalf("the refused request reached the job: %+v", req)
	default:
	}
}

// TestProof: ProveTarget leaves a proof in the deepest existing directory of a target and
// creates nothing else; CheckProof accepts it there, refuses an unknown or malformed proof
// and a symbolic link in its place, and refuses it once removed.
func TestProof(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "a", "b")
	proof, remove, err := ProveTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != proofPrefix+proof {
		t.Fatalf("%s holds %v; want only the proof file", dir, entries)
	}
	if err := CheckProof(target, proof); err != nil {
		t.Fatalf("CheckProof of the proof just made: %v", err)
	}
	for _, bad := range []string{strings.Repeat("a", proofLen), "../../etc/passwd", ""} {
		if err := CheckProof(target, bad); err == nil {
			t.Errorf("CheckProof(%q) accepted it", bad)
		}
	}
	remove()
	if err := CheckProof(target, proof); err == nil {
		t.Fatalf("CheckProof accepted a removed proof")
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, proofPrefix+proof)); err != nil {
		t.Fatal(err)
	}
	if err := CheckProof(target, proof); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("CheckProof of a symbolic link in the proof's place: %v; want a refusal", err)
	}
}

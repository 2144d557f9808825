package dirstorage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// TestSavepointTargetRules: a savepoint target that is relative, has a ".." element, or
// leads (directly or through a symbolic link) into the job's checkpoint directory, a chk-N
// directory or a savepoint is refused with an error naming the target and the rule, and
// nothing is created for it; an absolute target elsewhere is created with its parents.
func TestSavepointTargetRules(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "wc")
	chk, _ := completeCheckpoint(t, a, 1, []byte("checkpoint 1"))
	jobDir, chkDir := filepath.Join(dir, "wc"), chk.ExternalPointer
	outside := t.TempDir()
	spLoc, err := a.InitializeLocationForSavepoint(ctx, 2, filepath.Join(outside, "sp"))
	if err != nil {
		t.Fatal(err)
	}
	sp := finalize(t, spLoc, []byte("savepoint 2")).ExternalPointer
	for link, to := range map[string]string{"to-job": jobDir, "to-chk": chkDir, "to-nothing": filepath.Join(outside, "missing")} {
		if err := os.Symlink(to, filepath.Join(outside, link)); err != nil {
			t.Fatal(err)
		}
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, c := range []struct{ target, rule string }{
		{"rel/sp", "relative path"},
		{filepath.Join(outside, "sp") + "/../../escape", `".." element`},
		{"file://" + outside + "/a/../b", `".." element`},
		{filepath.Join(jobDir, "sub"), "checkpoint directory of job"},
		{jobDir, "checkpoint directory of job"},
		{filepath.Join(jobDir, "shared"), "checkpoint directory of job"},
		{filepath.Join(chkDir, "inside"), "checkpoint directory of job"},
		{filepath.Join(outside, "to-job", "sp"), "checkpoint directory of job"},
		{filepath.Join(outside, "to-chk"), "checkpoint directory of job"},
		{filepath.Join(sp, "nested"), "in the checkpoint or savepoint"},
		{filepath.Join(outside, "to-nothing", "sp"), "symbolic link to a file that does not exist"},
	} {
		before := filesUnder(t, filepath.Dir(dir))
		_, err := a.InitializeLocationForSavepoint(ctx, 3, c.target)
		if !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(err.Error(), c.rule) || !strings.Contains(err.Error(), c.target) {
			t.Errorf("savepoint target %q: %v; want a refusal naming it and %q", c.target, err, c.rule)
		}
		if after := filesUnder(t, filepath.Dir(dir)); !slices.Equal(before, after) {
			t.Errorf("savepoint target %q: files changed from %v to %v", c.target, before, after)
		}
	}
	if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
		t.Errorf("the working directory got %v", entries)
	}
	if _, err := os.Stat(filepath.Join(outside, "missing")); !os.IsNotExist(err) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
	for _, target := range []string{filepath.Join(outside, "new", "deeper"), "file://" + filepath.Join(outside, "uri"), dir} {
		loc, err := a.InitializeLocationForSavepoint(ctx, 4, target)
		if err != nil {
			t.Fatalf("savepoint target %q: %v", target, err)
		}
		if got := filepath.Dir(loc.LocationReference()); got != strings.TrimPrefix(target, "file://") {
			t.Fatalf("savepoint target %q: location %s", target, loc.LocationReference())
		}
	}
}

// TestDisposeDeletesOnlyItsOwnFiles: dispose of a savepoint removes exactly its metadata,
// its state files and its directory, and nothing beside it; with a file and a directory of
// someone else's in it, those stay, with the savepoint's directory, and the error names
// them, while the savepoint's own files are gone and it no longer resolves.
func TestDisposeDeletesOnlyItsOwnFiles(t *testing.T) {
	ctx := context.Background()
	s, _ := newConfigured(t, nil)
	a := newJob(t, s, "wc")
	parent := t.TempDir()
	neighbour := filepath.Join(parent, "neighbour.txt")
	if err := os.WriteFile(neighbour, []byte("not the savepoint's"), 0o644); err != nil {
		t.Fatal(err)
	}
	savepoint := func(id int64) (sdk.CompletedCheckpointStorageLocation, []string) {
		t.Helper()
		loc, err := a.InitializeLocationForSavepoint(ctx, id, parent)
		if err != nil {
			t.Fatal(err)
		}
		writeState(t, loc, sdk.ScopeExclusive, pattern(100<<10, 1), 4096)
		writeState(t, loc, sdk.ScopeShared, pattern(100<<10, 2), 4096)
		c := finalize(t, loc, []byte("savepoint"))
		files := filesUnder(t, c.ExternalPointer)
		if len(files) != 3 {
			t.Fatalf("savepoint %s holds %v, want two state files and _metadata", c.ExternalPointer, files)
		}
		return c, files
	}

	clean, _ := savepoint(1)
	if err := a.DisposeCheckpoint(ctx, clean); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(clean.ExternalPointer); !os.IsNotExist(err) {
		t.Fatalf("%s survived its disposal: %v", clean.ExternalPointer, err)
	}
	if b, err := os.ReadFile(neighbour); err != nil || string(b) != "not the savepoint's" {
		t.Fatalf("the file beside the savepoint: %q, %v", b, err)
	}

	dirty, _ := savepoint(2)
	foreign := filepath.Join(dirty.ExternalPointer, "notes.txt")
	if err := os.WriteFile(foreign, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dirty.ExternalPointer, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := a.DisposeCheckpoint(ctx, dirty)
	if err == nil || !strings.Contains(err.Error(), `"notes.txt"`) || !strings.Contains(err.Error(), `"keep"`) || !strings.Contains(err.Error(), "stays") {
		t.Fatalf("dispose of a savepoint holding foreign entries: %v; want an error naming them", err)
	}
	if got := filesUnder(t, dirty.ExternalPointer); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("left in %s: %v, want only notes.txt", dirty.ExternalPointer, got)
	}
	if _, err := os.Stat(filepath.Join(dirty.ExternalPointer, "keep")); err != nil {
		t.Fatalf("the foreign directory: %v", err)
	}
	if _, err := s.ResolveCheckpoint(ctx, dirty.ExternalPointer); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("the disposed savepoint still resolves: %v", err)
	}
}

package connectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func committedLines(t *testing.T, dir string) []string {
	t.Helper()
	files, err := CommittedFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Fields(string(b))...)
	}
	sort.Strings(out)
	return out
}

func TestFileSinkCommitsOnlyCompletedCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sink := FileSink{Dir: dir}
	w, err := sink.Open(ctx, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write("a")
	st1, _ := w.PreCommit(1)
	w.Write("b")
	if got := committedLines(t, dir); len(got) != 0 {
		t.Fatalf("visible before any commit: %v", got)
	}
	if err := w.Commit(1); err != nil {
		t.Fatal(err)
	}
	if got := committedLines(t, dir); strings.Join(got, ",") != "a" {
		t.Fatalf("after commit 1: %v", got)
	}
	st2, _ := w.PreCommit(2) // pre-committed, but checkpoint 2 never completes
	w.Write("c")
	w.Close() // crash

	// Restore from checkpoint 2 (completed, notification lost): b is committed, c dropped.
	w2, err := sink.Open(ctx, 0, 1, st2)
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if got := committedLines(t, dir); strings.Join(got, ",") != "a,b" {
		t.Fatalf("after restore from 2: %v", got)
	}
	// Restoring from checkpoint 1 again is idempotent for what was committed.
	if _, err := sink.Open(ctx, 0, 1, st1); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("uncommitted file %s left after restore", e.Name())
		}
	}
}

func TestFileSinkReportsLostPendingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, _ := FileSink{Dir: dir}.Open(ctx, 0, 1, nil)
	w.Write("x")
	st, _ := w.PreCommit(7)
	matches, _ := filepath.Glob(filepath.Join(dir, ".part-0-7-*.pending"))
	if len(matches) != 1 {
		t.Fatalf("pending files %v", matches)
	}
	os.Remove(matches[0])
	_, err := FileSink{Dir: dir}.Open(ctx, 0, 1, st)
	if err == nil || !strings.Contains(err.Error(), "checkpoint 7") {
		t.Fatalf("want an error naming checkpoint 7, got %v", err)
	}
}

// TestFileSinkRewindMovesLaterOutputAside commits the output of checkpoints 1 to 4, then
// rewinds to checkpoint 2: the part files of checkpoints 3 and 4 move into one
// _moved-aside-* directory, nothing is deleted, and the committed files are those of 1 and 2.
func TestFileSinkRewindMovesLaterOutputAside(t *testing.T) {
	dir := t.TempDir()
	sink := FileSink{Dir: dir, Key: "job.output"}
	ctx := context.Background()
	w, err := sink.Open(ctx, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 4; id++ {
		if err := w.Write(fmt.Sprintf("line %d", id)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.PreCommit(id); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(id); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a part file"), 0o644)
	moved, where, err := sink.RewindTo(ctx, 2)
	if err != nil || moved != 2 || !strings.HasPrefix(filepath.Base(where), MovedAsidePrefix) || !strings.HasSuffix(where, "-after-chk-2") {
		t.Fatalf("RewindTo(2) = %d, %q, %v; want 2 files moved into _moved-aside-*-after-chk-2", moved, where, err)
	}
	aside, _ := filepath.Glob(filepath.Join(where, "part-0-*"))
	left, _ := CommittedFiles(dir)
	var names []string
	for _, f := range left {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	if len(aside) != 2 || len(names) != 3 || names[0] != "notes.txt" || !strings.HasPrefix(names[1], "part-0-1-") || !strings.HasPrefix(names[2], "part-0-2-") {
		t.Fatalf("aside %v, committed %v; want parts 3 and 4 aside, notes.txt and parts 1 and 2 committed", aside, names)
	}
	for _, f := range aside {
		if n := strings.Split(filepath.Base(f), "-")[2]; n != "3" && n != "4" {
			t.Fatalf("%s moved aside", f)
		}
	}
	if moved, _, err := sink.RewindTo(ctx, 2); moved != 0 || err != nil {
		t.Fatalf("second RewindTo(2) = %d, %v; want nothing to move", moved, err)
	}
}

func TestFileSinkPreflightNamesTheKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	err := FileSink{Dir: filepath.Join(file, "out"), Key: "job.output"}.Preflight(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "job.output: ") {
		t.Fatalf("Preflight under a file: %v", err)
	}
	if err := (FileSink{Dir: filepath.Join(dir, "new", "out")}).Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight of a creatable directory: %v", err)
	}
}

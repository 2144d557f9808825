package connectors

import (
	"context"
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

package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeLines(t *testing.T, path string, n int) []string {
	t.Helper()
	var lines []string
	var b strings.Builder
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("line %d %s", i, strings.Repeat("x", i%37))
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return lines
}

// readAll reads every subtask to the end, restarting each reader from its saved position
// every `restartEvery` reads, and returns all lines read.
func readAll(t *testing.T, src TextFiles, p, batch, restartEvery int) []string {
	t.Helper()
	ctx := context.Background()
	var got []string
	for s := 0; s < p; s++ {
		r, err := src.Open(ctx, s, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for reads := 1; ; reads++ {
			err := r.Read(ctx, batch, func(rec any) { got = append(got, rec.(string)) })
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if restartEvery > 0 && reads%restartEvery == 0 {
				pos, err := r.Position()
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				if r, err = src.Open(ctx, s, p, pos); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.Close()
	}
	return got
}

func TestTextFilesReadsEveryLineOnceAcrossSplitsAndRestores(t *testing.T) {
	dir := t.TempDir()
	want := writeLines(t, filepath.Join(dir, "a.txt"), 5000)
	want = append(want, writeLines(t, filepath.Join(dir, "b.txt"), 77)...)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("not me\n"), 0o644)
	sort.Strings(want)
	for _, tc := range []struct{ split, p, batch, restart int }{
		{1 << 20, 1, 100, 0}, {1000, 1, 7, 3}, {997, 3, 13, 2}, {64, 2, 1, 5}, {4096, 4, 1000, 1},
	} {
		t.Run(fmt.Sprintf("split%d_p%d_batch%d_restart%d", tc.split, tc.p, tc.batch, tc.restart), func(t *testing.T) {
			got := readAll(t, TextFiles{Path: dir, SplitSize: int64(tc.split)}, tc.p, tc.batch, tc.restart)
			sort.Strings(got)
			if len(got) != len(want) {
				t.Fatalf("read %d lines, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("line %d: got %q want %q", i, got[i], want[i])
				}
			}
		})
	}
}

func TestTextFilesMissingInputNamesIt(t *testing.T) {
	_, err := TextFiles{Path: "/nonexistent/input.txt"}.Open(context.Background(), 0, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/input.txt") {
		t.Fatalf("error %v does not name the input", err)
	}
}

func TestGeneratorReplaysFromPosition(t *testing.T) {
	ctx := context.Background()
	g := Generator{Records: 1000, Keys: 10}
	var all, resumed []Event
	r, _ := g.Open(ctx, 1, 3, nil)
	r.Read(ctx, 100, func(e any) { all = append(all, e.(Event)) })
	pos, _ := r.Position()
	for r.Read(ctx, 50, func(e any) { all = append(all, e.(Event)) }) == nil {
	}
	r2, err := g.Open(ctx, 1, 3, pos)
	if err != nil {
		t.Fatal(err)
	}
	for r2.Read(ctx, 50, func(e any) { resumed = append(resumed, e.(Event)) }) == nil {
	}
	if len(all) != 333 || len(resumed) != 233 {
		t.Fatalf("subtask 1 of 3 emitted %d events (resumed %d), want 333 (233)", len(all), len(resumed))
	}
	for i := range resumed {
		if resumed[i] != all[100+i] {
			t.Fatalf("resumed event %d = %v, want %v", i, resumed[i], all[100+i])
		}
	}
}

// TestGeneratorKeys: event i has key "k<h(i) mod Keys>" as Generator documents, computed
// here from the formula; the keys of a read, made over shared buffers, keep their bytes
// through the reads after it.
func TestGeneratorKeys(t *testing.T) {
	ctx := context.Background()
	g := Generator{Records: 5000, Keys: 1 << 40}
	r, _ := g.Open(ctx, 0, 1, nil)
	var got []Event
	for r.Read(ctx, 2000, func(e any) { got = append(got, e.(Event)) }) == nil {
	}
	if len(got) != 5000 {
		t.Fatalf("%d events, want 5000", len(got))
	}
	for i, e := range got {
		x := uint64(i) * 0x9E3779B97F4A7C15
		x ^= x >> 29
		if want := fmt.Sprintf("k%d", x%(1<<40)); e.Key != want || e.Value != int64(i%100) {
			t.Fatalf("event %d = %+v, want key %s value %d", i, e, want, i%100)
		}
	}
}

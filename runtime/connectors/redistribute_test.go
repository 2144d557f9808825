package connectors

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// rescalable is a source that can spread its positions over another parallelism.
type rescalable interface {
	dataflow.Source
	dataflow.Redistributor
}

// rescalings are the parallelism changes every connector is tested with, one at a time
// and chained.
var rescalings = [][]int{{2, 3}, {3, 1}, {1, 4}, {4, 2}, {2, 3, 1, 4, 2}}

// readRescaled runs src at each parallelism of ps in turn. At every parallelism but the
// last each subtask reads a random number of records (none for some), takes its position
// (a checkpoint), reads on a little (records a crash loses: not counted) and stops; the
// positions are redistributed over the next parallelism. A subtask of the first
// parallelism that read nothing saves no position (nil), as a subtask that never took part
// in a checkpoint. The last parallelism reads to the end. It returns every record counted
// and, per parallelism, how many records each subtask read.
func readRescaled(t *testing.T, src rescalable, ps []int, rng *rand.Rand) (got []any, perSubtask [][]int) {
	t.Helper()
	ctx := context.Background()
	var states [][]byte
	for k, p := range ps {
		last := k == len(ps)-1
		next := make([][]byte, p)
		counts := make([]int, p)
		for i := 0; i < p; i++ {
			var pos []byte
			if states != nil {
				pos = states[i]
			}
			r, err := src.Open(ctx, i, p, pos)
			if err != nil {
				t.Fatalf("p=%d subtask %d: open: %v", p, i, err)
			}
			want := rng.Intn(700)
			if last {
				want = -1
			}
			read := func(n int, keep bool) bool {
				for n != 0 {
					batch := 1 + rng.Intn(40)
					if n > 0 {
						batch = min(batch, n)
					}
					before := len(got)
					err := r.Read(ctx, batch, func(rec any) {
						if keep {
							got = append(got, rec)
						}
					})
					if keep {
						counts[i] += len(got) - before
						if n > 0 {
							n -= len(got) - before
						}
					} else if n > 0 {
						n -= batch
					}
					if errors.Is(err, io.EOF) {
						return true
					}
					if err != nil {
						t.Fatalf("p=%d subtask %d: read: %v", p, i, err)
					}
				}
				return false
			}
			read(want, true)
			if !last && !(k == 0 && counts[i] == 0 && i%2 == 1) {
				if next[i], err = r.Position(); err != nil {
					t.Fatal(err)
				}
				read(1+rng.Intn(50), false) // read after the checkpoint, then a crash
			}
			r.Close()
		}
		perSubtask = append(perSubtask, counts)
		if last {
			break
		}
		var err error
		if states, err = src.Redistribute(next, ps[k+1]); err != nil {
			t.Fatalf("redistribute %d -> %d: %v", p, ps[k+1], err)
		}
		if len(states) != ps[k+1] {
			t.Fatalf("redistribute %d -> %d gave %d states", p, ps[k+1], len(states))
		}
	}
	return got, perSubtask
}

// sameRecords reports how got differs from want as multisets ("" if it does not).
func sameRecords(got, want []string) string {
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("record %d (sorted): got %q, want %q", i, g[i], w[i])
		}
	}
	if len(g) != len(w) {
		return fmt.Sprintf("got %d records, want %d", len(g), len(w))
	}
	return ""
}

func rescaleName(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, "to")
}

// TestTextFilesRedistributeReadsEveryLineOnce: the lines of three files (one empty), in
// splits of 997 bytes, are read exactly once across every rescaling, whatever each subtask
// had read when the positions were taken.
func TestTextFilesRedistributeReadsEveryLineOnce(t *testing.T) {
	dir := t.TempDir()
	want := writeLines(t, filepath.Join(dir, "a.txt"), 20000)
	want = append(want, writeLines(t, filepath.Join(dir, "b.txt"), 77)...)
	os.WriteFile(filepath.Join(dir, "c.txt"), nil, 0o644)
	checkRescaled(t, TextFiles{Path: dir, SplitSize: 997}, want)
}

// checkRescaled runs src through every rescaling, three times with different reads
// before each redistribution, and checks that the records read (as fmt.Sprint shows them)
// are want, each once, and that after the last redistribution every subtask read some.
func checkRescaled(t *testing.T, src rescalable, want []string) {
	for _, ps := range rescalings {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", rescaleName(ps), seed), func(t *testing.T) {
				got, per := readRescaled(t, src, ps, rand.New(rand.NewSource(seed)))
				records := make([]string, len(got))
				for i, r := range got {
					records[i] = fmt.Sprint(r)
				}
				if d := sameRecords(records, want); d != "" {
					t.Fatalf("%s (records read per subtask at each parallelism: %v)", d, per)
				}
				for i, n := range per[len(per)-1] {
					if n == 0 {
						t.Fatalf("subtask %d of %d read nothing after the redistribution: %v", i, ps[len(ps)-1], per)
					}
				}
			})
		}
	}
}

// TestTextFilesReadsPositionsOfTheEarlierFormat restores positions written in the format
// of earlier versions ({split, offset}: the index of the split being read among the
// subtask's round-robin share, and the offset in it) at the parallelism that wrote them:
// the reader reads exactly what the equivalent list of unfinished splits reads.
func TestTextFilesReadsPositionsOfTheEarlierFormat(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, "a.txt"), 3000)
	writeLines(t, filepath.Join(dir, "b.txt"), 50)
	src := TextFiles{Path: dir, SplitSize: 1500}
	ctx := context.Background()
	const p = 3
	splits, err := src.splits()
	if err != nil {
		t.Fatal(err)
	}
	readRest := func(pos []byte, subtask int) []string {
		t.Helper()
		r, err := src.Open(ctx, subtask, p, pos)
		if err != nil {
			t.Fatalf("open subtask %d at %s: %v", subtask, pos, err)
		}
		defer r.Close()
		var out []string
		for {
			err := r.Read(ctx, 100, func(rec any) { out = append(out, rec.(string)) })
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for subtask := 0; subtask < p; subtask++ {
		var share []split
		for i, sp := range splits {
			if i%p == subtask {
				share = append(share, sp)
			}
		}
		for _, read := range []int{0, 1, 17, 40, 1000} {
			r, err := src.Open(ctx, subtask, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Read(ctx, read, func(any) {})
			pos, _ := r.Position()
			r.Close()
			var now filePos
			if err := json.Unmarshal(pos, &now); err != nil {
				t.Fatal(err)
			}
			// The same position in the earlier format.
			idx := len(share)
			var offset int64
			if len(now.Splits) > 0 {
				cur := now.Splits[0]
				for i, sp := range share {
					if filepath.Base(sp.File) == cur.File && sp.Start == cur.Start {
						idx = i
					}
				}
				offset = cur.Offset
			}
			legacy := []byte(fmt.Sprintf(`{"split":%d,"offset":%d}`, idx, offset))
			want, got := readRest(pos, subtask), readRest(legacy, subtask)
			if d := sameRecords(got, want); d != "" || len(got) != len(want) {
				t.Fatalf("subtask %d after %d lines: earlier format %s reads differently than %s: %s", subtask, read, legacy, pos, d)
			}
		}
		if _, err := src.Open(ctx, subtask, p, []byte(fmt.Sprintf(`{"split":%d,"offset":0}`, len(share)+1))); err == nil || !strings.Contains(err.Error(), "the input changed") {
			t.Fatalf("a split beyond the subtask's share: %v, want an error saying the input changed", err)
		}
	}
}

// TestGeneratorRedistributeEmitsEveryEventOnce: the events of a generator are emitted
// exactly once across every rescaling, and after each redistribution every subtask has
// events to emit. With 2^62 keys every event has its own key, so a duplicate shows.
func TestGeneratorRedistributeEmitsEveryEventOnce(t *testing.T) {
	g := Generator{Records: 30011, Keys: 1 << 62}
	ctx := context.Background()
	r, err := g.Open(ctx, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	seen := map[string]bool{}
	for r.Read(ctx, 1000, func(e any) {
		s := fmt.Sprint(e)
		if seen[s] {
			t.Fatalf("event %s twice in one pass: the test cannot tell duplicates", s)
		}
		seen[s] = true
		want = append(want, s)
	}) == nil {
	}
	if int64(len(want)) != g.Records {
		t.Fatalf("a single subtask emitted %d events, want %d", len(want), g.Records)
	}
	checkRescaled(t, g, want)
}

// TestGeneratorReadsPositionsOfTheEarlierFormat: a position of earlier versions (a varint
// of the next event, the stride being the parallelism) resumes where it says.
func TestGeneratorReadsPositionsOfTheEarlierFormat(t *testing.T) {
	ctx := context.Background()
	g := Generator{Records: 1000, Keys: 1 << 62}
	collect := func(pos []byte) []string {
		r, err := g.Open(ctx, 1, 3, pos)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for r.Read(ctx, 50, func(e any) { out = append(out, fmt.Sprint(e)) }) == nil {
		}
		return out
	}
	all := collect(nil) // events 1, 4, 7, ...
	rest := collect(binary.AppendVarint(nil, 301))
	if len(all) != 333 || len(rest) != 233 {
		t.Fatalf("subtask 1 of 3 emitted %d events, from event 301 %d; want 333 and 233", len(all), len(rest))
	}
	if d := sameRecords(rest, all[100:]); d != "" {
		t.Fatalf("resumed at event 301: %s", d)
	}
}

// TestFileSinkRedistributeCommitsEveryTransactionOnce runs a file sink through every
// rescaling. At each parallelism but the last, every subtask writes and pre-commits
// checkpoint A, only some learn that A completed, they write and pre-commit checkpoint B
// (the one restored), some learn of B, all write and pre-commit C, which one subtask even
// commits, and they crash with a transaction in progress. The job is then restored from
// B at the next parallelism, as the runner does it: output committed after B is moved
// aside, the subtasks' states are redistributed, and the new subtasks open in a random
// order. At the end the committed lines are exactly those written up to each restored
// checkpoint and in the last run, each once, and no uncommitted file is left.
func TestFileSinkRedistributeCommitsEveryTransactionOnce(t *testing.T) {
	ctx := context.Background()
	for _, ps := range rescalings {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", rescaleName(ps), seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				dir := t.TempDir()
				sink := FileSink{Dir: dir}
				var want []string
				var states [][]byte
				line := 0
				write := func(w dataflow.SinkWriter, keep bool) {
					for n := rng.Intn(20); n >= 0; n-- {
						line++
						l := fmt.Sprintf("line-%d", line)
						if err := w.Write(l); err != nil {
							t.Fatal(err)
						}
						if keep {
							want = append(want, l)
						}
					}
				}
				for k, p := range ps {
					ws := make([]dataflow.SinkWriter, p)
					for _, i := range rng.Perm(p) {
						var st []byte
						if states != nil {
							st = states[i]
						}
						w, err := sink.Open(ctx, i, p, st)
						if err != nil {
							t.Fatalf("p=%d: open subtask %d: %v", p, i, err)
						}
						ws[i] = w
					}
					a, b, c := int64(10*k+1), int64(10*k+2), int64(10*k+3)
					last := k == len(ps)-1
					if last {
						for _, w := range ws {
							write(w, true)
							if _, err := w.PreCommit(a); err != nil {
								t.Fatal(err)
							}
							if err := w.Commit(a); err != nil {
								t.Fatal(err)
							}
							w.Close()
						}
						break
					}
					restored := make([][]byte, p)
					for i, w := range ws {
						write(w, true)
						if _, err := w.PreCommit(a); err != nil {
							t.Fatal(err)
						}
						if rng.Intn(2) == 0 {
							if err := w.Commit(a); err != nil {
								t.Fatal(err)
							}
						}
						write(w, true)
						st, err := w.PreCommit(b)
						if err != nil {
							t.Fatal(err)
						}
						restored[i] = st
					}
					for i, w := range ws {
						if rng.Intn(2) == 0 {
							if err := w.Commit(b); err != nil {
								t.Fatal(err)
							}
						}
						write(w, false)
						if _, err := w.PreCommit(c); err != nil {
							t.Fatal(err)
						}
						if i == 0 {
							if err := w.Commit(c); err != nil { // committed, but the restore is from b
								t.Fatal(err)
							}
						}
						write(w, false)
						w.Close() // crash, a transaction in progress
					}
					if _, _, err := sink.RewindTo(ctx, b); err != nil {
						t.Fatal(err)
					}
					var err error
					if states, err = sink.Redistribute(restored, ps[k+1]); err != nil {
						t.Fatalf("redistribute %d -> %d: %v", p, ps[k+1], err)
					}
				}
				if d := sameRecords(committedLines(t, dir), want); d != "" {
					t.Fatal(d)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), ".") {
						t.Fatalf("uncommitted file %s left", e.Name())
					}
				}
			})
		}
	}
}

package dataflow_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// TestStatelessChain: Map, FlatMap and Filter chained between a source and a keyed
// operator transform every record once, in order per key. The job keeps the longest
// line length seen per first letter of lines that are not blank; the expected result is
// computed from the input directly.
func TestStatelessChain(t *testing.T) {
	f := newFixture(t, 256<<10, nil)
	job := dataflow.NewJob("wordcount") // the fixture's checkpoint store is for this job name
	job.Parallelism = 2
	lines := dataflow.FromSource[string](job, "lines", connectors.TextFiles{Path: f.input})
	trimmed := dataflow.Map(lines, strings.TrimSpace)
	nonBlank := dataflow.Filter(trimmed, func(s string) bool { return s != "" })
	lengths := dataflow.FlatMap(nonBlank, func(s string, emit func([2]string)) {
		emit([2]string{s[:1], strconv.Itoa(len(s))})
	})
	longest := state.NewValue("longest", state.Int64)
	out := dataflow.Process(dataflow.KeyBy(lengths, func(r [2]string) []byte { return []byte(r[0]) }), "longest",
		[]state.Descriptor{longest}, func(kc *dataflow.KeyedContext, r [2]string, emit func(string)) error {
			n, _ := strconv.ParseInt(r[1], 10, 64)
			cur, _, err := longest.Get(kc.State())
			if err != nil || n <= cur {
				return err
			}
			emit(r[0] + "\t" + r[1])
			return longest.Update(kc.State(), n)
		})
	dataflow.SinkTo(out, connectors.FileSink{Dir: f.output})
	if err := dataflow.Run(context.Background(), job, f.env(nil, nil)); err != nil {
		t.Fatal(err)
	}

	want := map[string]int{}
	in, err := os.ReadFile(f.input)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(in), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(l) > want[l[:1]] {
			want[l[:1]] = len(l)
		}
	}
	got := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(f.output, "part-*"))
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "\t")
			n, _ := strconv.Atoi(v)
			got[k] = max(got[k], n)
		}
		fh.Close()
	}
	if len(got) != len(want) {
		t.Fatalf("%d first letters in the output, %d in the input", len(got), len(want))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Fatalf("longest line starting with %q: %d in the output, %d in the input", k, got[k], want[k])
		}
	}
}

package stateproc_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"testing"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
)

// backends are the state backends the tests run jobs on.
var backends = []struct {
	name        string
	backend     string
	incremental bool
}{
	{"hashmap", config.Hashmap, false},
	{"leveldb-incremental", config.LevelDB, true},
}

// TestInspectAndDumpWordCount runs a word count to its end and checks what Inspect and
// Dump find in its final checkpoint against the input's word counts: one entry per
// distinct word, its bytes as the state key and varint value they take, and each dumped
// value the word's count.
func TestInspectAndDumpWordCount(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			w := runWordCount(t, b.backend, b.incremental, 200<<10, 10000, 0)
			if err := wordcheck.Check(w.expected, w.output); err != nil {
				t.Fatal(err)
			}
			c := w.last(t)
			rep, err := c.Inspect(bg)
			if err != nil {
				t.Fatal(err)
			}
			checkWordCountReport(t, rep, w.expected, b.incremental)

			var out bytes.Buffer
			n, err := c.Dump(bg, &out, "count", "count")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				var l stateproc.DumpLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("dump line %q: %v", sc.Text(), err)
				}
				var v int64
				if err := json.Unmarshal(l.Value, &v); err != nil {
					t.Fatalf("dump line %q: value: %v", sc.Text(), err)
				}
				if l.State != "count" || l.Type != "value[state.int64Codec]" || l.KeyEncoding != stateproc.EncodingUTF8 ||
					l.ValueEncoding != stateproc.EncodingDecoded || l.KeyGroup < 0 || l.KeyGroup >= 128 {
					t.Fatalf("dump line %q: want state count of type value[state.int64Codec], a UTF-8 key, a decoded value, a key group below 128", sc.Text())
				}
				if _, dup := got[l.Key]; dup {
					t.Fatalf("word %q dumped twice", l.Key)
				}
				got[l.Key] = v
			}
			if n != int64(len(got)) {
				t.Fatalf("Dump says %d lines, wrote %d", n, len(got))
			}
			checkCounts(t, got, w.expected)
		})
	}
}

// checkWordCountReport checks the report of a word count's final checkpoint.
func checkWordCountReport(t *testing.T, rep *stateproc.Report, expected map[string]int64, incremental bool) {
	t.Helper()
	var wantBytes int64
	for word, n := range expected {
		// The state key: key group (2 bytes), name length (1), "count", the word; the
		// value: the count as a varint.
		wantBytes += int64(2+1+len("count")+len(word)) + int64(len(binary.AppendVarint(nil, n)))
	}
	if rep.Job != "wc" || rep.JobType != "wordcount" || rep.MaxParallelism != 128 || rep.Kind != "checkpoint" {
		t.Fatalf("report header %+v: want a checkpoint of wordcount job wc with 128 key groups", rep)
	}
	ops := map[string]stateproc.OperatorReport{}
	for _, op := range rep.Operators {
		ops[op.ID] = op
	}
	count := ops["count"]
	if count.Entries != int64(len(expected)) || count.Bytes != wantBytes {
		t.Fatalf("operator count: %d entries of %d bytes, want %d distinct words of %d bytes", count.Entries, count.Bytes, len(expected), wantBytes)
	}
	if len(count.States) != 1 || count.States[0] != (stateproc.StateReport{Name: "count", Type: "value[state.int64Codec]", Entries: int64(len(expected)), Bytes: wantBytes}) {
		t.Fatalf("operator count states %+v", count.States)
	}
	if count.Parallelism != 2 || len(count.Subtasks) != 2 {
		t.Fatalf("operator count: parallelism %d, %d subtasks; want 2 and 2", count.Parallelism, len(count.Subtasks))
	}
	var sum int64
	for i, st := range count.Subtasks {
		if st.Index != i {
			t.Fatalf("subtask %d reported at %d: want them by index", st.Index, i)
		}
		if len(st.Handles) != 1 {
			t.Fatalf("subtask %d: %d handles, want 1", i, len(st.Handles))
		}
		h := st.Handles[0]
		if want := [2]int{i * 64, (i + 1) * 64}; h.KeyGroups != want || !h.Decoded {
			t.Fatalf("subtask %d: handle of key groups %v (decoded %v), want %v decoded", i, h.KeyGroups, h.Decoded, want)
		}
		sum += h.Entries
	}
	if sum != count.Entries {
		t.Fatalf("handles hold %d entries, the operator %d", sum, count.Entries)
	}
	for _, id := range []string{"source", "sink"} {
		if op := ops[id]; op.Entries != 0 || op.OperatorStateBytes == 0 || len(op.States) != 0 {
			t.Fatalf("operator %s: %+v, want non-keyed state only", id, op)
		}
	}
	if incremental != (len(rep.SharedFiles) > 0) {
		t.Fatalf("incremental %v, shared files %v", incremental, rep.SharedFiles)
	}
	for _, sf := range rep.SharedFiles {
		u, err := url.Parse(sf.Ref)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(u.Path)
		if err != nil || fi.Size() != sf.Size || len(sf.ReferencedBy) == 0 {
			t.Fatalf("shared file %+v: on disk %v, %v", sf, fi, err)
		}
	}
}

// checkCounts compares dumped values with the expected ones.
func checkCounts(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("dumped %d keys, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("key %q: dumped %d, want %d", k, got[k], n)
		}
	}
}

// TestDumpAggregate runs the aggregate job on leveldb with incremental checkpoints and
// checks that the dumped sums of its final checkpoint are the sums of the generated events,
// which the test reads from the generator itself.
func TestDumpAggregate(t *testing.T) {
	f := newFixture(t, config.LevelDB, true)
	const records, keys = 30000, 700
	job, err := jobs.Aggregate(jobs.Spec{Name: "agg", Parallelism: 2, Keys: keys, Records: records, Rate: 30000})
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.run(t, job, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for s := range 2 {
		r, err := connectors.Generator{Records: records, Keys: keys}.Open(bg, s, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			err = r.Read(bg, 1000, func(e any) { ev := e.(connectors.Event); want[ev.Key] += ev.Value })
		}
		if !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
	}
	c := f.open(t, done[len(done)-1].Location.ExternalPointer)
	var out bytes.Buffer
	if _, err := c.Dump(bg, &out, "aggregate", ""); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	dec := json.NewDecoder(&out)
	for {
		var l stateproc.DumpLine
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var v int64
		if l.State != "sum" || json.Unmarshal(l.Value, &v) != nil {
			t.Fatalf("dump line %+v: want a decoded sum", l)
		}
		got[l.Key] = v
	}
	checkCounts(t, got, want)
	rep, err := c.Inspect(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range rep.Operators {
		if op.ID == "aggregate" && op.Entries != int64(len(want)) {
			t.Fatalf("operator aggregate: %d entries, want %d keys", op.Entries, len(want))
		}
	}
}

// TestDumpRefusesWhatIsNotThere checks that the errors of Dump name what exists.
func TestDumpRefusesWhatIsNotThere(t *testing.T) {
	c := runWordCount(t, config.Hashmap, false, 10<<10, 0, 0).last(t)
	for _, tc := range []struct{ op, state, want string }{
		{"nope", "", `no operator "nope"; its operators: "count", "sink", "source"`},
		{"source", "", `operator "source" keeps no keyed state; operators with keyed state: "count"`},
		{"count", "nope", `operator "count" has no state "nope"; its states: "count"`},
	} {
		_, err := c.Dump(bg, io.Discard, tc.op, tc.state)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("Dump(%q, %q) = %v, want an error saying %s", tc.op, tc.state, err, tc.want)
		}
	}
}

// TestInspectedStreamsExist guards the assumption that every ref Inspect reports is a file
// of the checkpoint: sizes agree with the files on disk.
func TestInspectedFilesMatchDisk(t *testing.T) {
	rep, err := runWordCount(t, config.Hashmap, false, 20<<10, 0, 0).last(t).Inspect(bg)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, op := range rep.Operators {
		for _, st := range op.Subtasks {
			for _, h := range st.Handles {
				for _, fr := range h.Files {
					u, err := url.Parse(fr.Ref)
					if err != nil {
						t.Fatal(err)
					}
					fi, err := os.Stat(u.Path)
					if err != nil || fi.Size() != fr.Size || fr.Scope != sdk.ScopeExclusive.String() {
						t.Fatalf("file %+v: on disk %v, %v", fr, fi, err)
					}
					files++
				}
			}
		}
	}
	if files != 2 {
		t.Fatalf("%d state files reported, want one per subtask of count", files)
	}
}

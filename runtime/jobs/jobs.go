// Package jobs holds the runner's built-in jobs, chosen by job.type in the configuration
// file: wordcount and aggregate.
//
// A job is built from the engine's API alone (runtime/dataflow, runtime/state and the
// built-in connectors), as a user's custom job is; jobs must never import the runner, the
// monitor, the plugin host, cmd/... or a plugin.
package jobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unsafe"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// Spec sizes and places a built-in job; it mirrors the job section of the configuration.
type Spec struct {
	Name           string
	Type           string
	Parallelism    int
	MaxParallelism int
	BatchSize      int
	Input, Output  string
	Rate           float64
	Keys, Records  int64
	// Source, when set, is what the job reads instead of the text files of Input (a
	// JetStream source for job.source: jetstream); its records are strings, lines of text.
	Source dataflow.Source
	// Sink, when set, is where the job writes instead of the part files of Output (a
	// JetStream sink for job.sink: jetstream); its records are Keyed (see Keyed) and
	// encoding.TextAppender.
	Sink dataflow.Sink
}

// Keyed is what the built-in jobs' records have besides their text: a key, which a sink
// may put in the subject (sink.jetstream.subject: counts.{key}).
type Keyed interface {
	Key() string
}

var builders = map[string]func(Spec) (*dataflow.Job, error){
	"wordcount": WordCount,
	"aggregate": Aggregate,
	"copy":      Copy,
}

// Types lists the built-in job types.
func Types() []string {
	var out []string
	for t := range builders {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Build returns the built-in job spec.Type.
func Build(spec Spec) (*dataflow.Job, error) {
	b, ok := builders[spec.Type]
	if !ok {
		return nil, fmt.Errorf("job.type %q: unknown job type (built-in: %s)", spec.Type, strings.Join(Types(), ", "))
	}
	return b(spec)
}

// newJob starts a job of type typ sized by spec.
func newJob(typ string, spec Spec) *dataflow.Job {
	j := dataflow.NewJob(spec.Name)
	j.Type = typ
	if spec.Parallelism > 0 {
		j.Parallelism = spec.Parallelism
	}
	if spec.MaxParallelism > 0 {
		j.MaxParallelism = spec.MaxParallelism
	}
	if spec.BatchSize > 0 {
		j.BatchSize = spec.BatchSize
	}
	j.Rate = spec.Rate
	return j
}

// WordCount counts words in text files: a word is a maximal run of Unicode letters and
// digits, lowercased; for every word seen it writes the line "word<TAB>count" with the
// word's running count.
func WordCount(spec Spec) (*dataflow.Job, error) {
	if spec.Input == "" && spec.Source == nil {
		return nil, fmt.Errorf("job.input: the wordcount job needs an input file or directory (or job.source: jetstream)")
	}
	if spec.Output == "" && spec.Sink == nil {
		return nil, fmt.Errorf("job.output: the wordcount job needs an output directory (or job.sink: jetstream)")
	}
	j := newJob("wordcount", spec)
	lines := dataflow.FromSource[string](j, "source", sourceOf(spec))
	words := dataflow.FlatMap(lines, SplitWords)
	counts := state.NewValue("count", state.Int64)
	keyed := dataflow.KeyBy(words, stringKey)
	out := dataflow.Process(keyed, "count", []state.Descriptor{counts},
		func(kc *dataflow.KeyedContext, w string, emit func(wordCount)) error {
			n, _, err := counts.Get(kc.State())
			if err != nil {
				return err
			}
			n++
			if err := counts.Update(kc.State(), n); err != nil {
				return err
			}
			emit(wordCount{Word: w, Count: n})
			return nil
		})
	dataflow.SinkTo(out, sinkOf(spec))
	return j, nil
}

// sourceOf returns the source of spec: Source, else the text files of Input.
func sourceOf(spec Spec) dataflow.Source {
	if spec.Source != nil {
		return spec.Source
	}
	return connectors.TextFiles{Path: spec.Input, Key: "job.input"}
}

// sinkOf returns the sink of spec: Sink, else the part files of Output.
func sinkOf(spec Spec) dataflow.Sink {
	if spec.Sink != nil {
		return spec.Sink
	}
	return connectors.FileSink{Dir: spec.Output, Key: "job.output"}
}

// wordCount is a record of the wordcount job: a word and its running count. The file sink
// writes it as "word<TAB>count" through AppendText, without building a string per record.
type wordCount struct {
	Word  string
	Count int64
}

// AppendText implements encoding.TextAppender: it appends "word<TAB>count".
func (c wordCount) AppendText(b []byte) ([]byte, error) {
	b = append(b, c.Word...)
	b = append(b, '\t')
	return strconv.AppendInt(b, c.Count, 10), nil
}

// Key implements Keyed: the word.
func (c wordCount) Key() string { return c.Word }

// String returns the line AppendText appends.
func (c wordCount) String() string {
	b, _ := c.AppendText(nil)
	return string(b)
}

// stringKey is the key of a string record: its bytes, without a copy. The engine only
// reads keys (routing hashes them, the state store copies them into its state keys), so
// the string's memory, which must never be written, is safe to share.
func stringKey(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// SplitWords emits the words of a line: maximal runs of Unicode letters and digits,
// lowercased.
func SplitWords(line string, emit func(string)) {
	start := -1
	for i, r := range line {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(strings.ToLower(line[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		emit(strings.ToLower(line[start:]))
	}
}

// Copy copies the lines of its source (the text files of Input, or Source) to its sink
// (the part files of Output, or Sink), one record per line; with neither Output nor Sink
// it drops them. Benchmarks hold it to the connectors' raw limits: a source alone (into
// nothing), a sink alone (from a file).
func Copy(spec Spec) (*dataflow.Job, error) {
	if spec.Input == "" && spec.Source == nil {
		return nil, fmt.Errorf("job.input: the copy job needs an input file or directory (or job.source: jetstream)")
	}
	j := newJob("copy", spec)
	var sink dataflow.Sink = connectors.Discard{}
	if spec.Output != "" || spec.Sink != nil {
		sink = sinkOf(spec)
	}
	// The engine keys what reaches a sink (its exchange is where records of a key meet);
	// the copy keys each line by itself and keeps no state.
	keyed := dataflow.KeyBy(dataflow.FromSource[string](j, "source", sourceOf(spec)), stringKey)
	dataflow.SinkTo(dataflow.Process(keyed, "copy", nil, func(_ *dataflow.KeyedContext, line string, emit func(string)) error {
		emit(line)
		return nil
	}), sink)
	return j, nil
}

// Aggregate sums generated values per key: spec.Records events over spec.Keys keys from
// a deterministic generator. With an output directory it writes "key<TAB>sum" per update;
// without one it discards them (benchmarks).
func Aggregate(spec Spec) (*dataflow.Job, error) {
	if spec.Keys <= 0 || spec.Records < 0 {
		return nil, fmt.Errorf("job.keys %d, job.records %d: the aggregate job needs keys > 0 and records >= 0", spec.Keys, spec.Records)
	}
	if spec.Source != nil {
		return nil, fmt.Errorf("job.source: the aggregate job generates its input; it reads no other source")
	}
	write := spec.Output != "" || spec.Sink != nil
	j := newJob("aggregate", spec)
	events := dataflow.FromSource[connectors.Event](j, "source", connectors.Generator{Records: spec.Records, Keys: spec.Keys})
	sums := state.NewReducing("sum", state.Int64, func(a, b int64) int64 { return a + b })
	keyed := dataflow.KeyBy(events, func(e connectors.Event) []byte { return stringKey(e.Key) })
	out := dataflow.Process(keyed, "aggregate", []state.Descriptor{sums},
		func(kc *dataflow.KeyedContext, e connectors.Event, emit func(keySum)) error {
			s, err := sums.Add(kc.State(), e.Value)
			if err != nil {
				return err
			}
			if write {
				emit(keySum{e.Key, s})
			}
			return nil
		})
	if write {
		dataflow.SinkTo(out, sinkOf(spec))
	} else {
		dataflow.SinkTo(out, connectors.Discard{})
	}
	return j, nil
}

// keySum is a record of the aggregate job: a key and its running sum, written
// "key<TAB>sum".
type keySum struct {
	key string
	sum int64
}

// AppendText implements encoding.TextAppender: it appends "key<TAB>sum".
func (k keySum) AppendText(b []byte) ([]byte, error) {
	b = append(b, k.key...)
	b = append(b, '\t')
	return strconv.AppendInt(b, k.sum, 10), nil
}

// Key implements Keyed.
func (k keySum) Key() string { return k.key }

// String returns the line AppendText appends.
func (k keySum) String() string {
	b, _ := k.AppendText(nil)
	return string(b)
}

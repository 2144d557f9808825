package jetstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// drain reads r until it ends (a bounded source) and returns what it emitted.
func drain(t *testing.T, r dataflow.SourceReader) []string {
	t.Helper()
	var out []string
	for {
		err := r.Read(context.Background(), 100, func(rec any) { out = append(out, rec.(string)) })
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readN reads r until it has emitted n records.
func readN(t *testing.T, r dataflow.SourceReader, n int) []string {
	t.Helper()
	var out []string
	testwait.For(t, fmt.Sprintf("%d records", n), 10*time.Second, func() error {
		err := r.Read(context.Background(), n-len(out), func(rec any) { out = append(out, rec.(string)) })
		if err != nil {
			return testwait.Stop(err)
		}
		if len(out) < n {
			return fmt.Errorf("%d records", len(out))
		}
		return nil
	})
	return out
}

func open(t *testing.T, s *Source, subtask, p int, pos []byte) dataflow.SourceReader {
	t.Helper()
	r, err := s.Open(context.Background(), subtask, p, pos)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// payloads returns n payloads "subject-i" for each subject, published round-robin.
func publishSpread(t *testing.T, ts *testServer, subjects []string, n int) []string {
	t.Helper()
	var all []string
	for i := 0; i < n; i++ {
		for _, s := range subjects {
			p := fmt.Sprintf("%s-%d", s, i)
			ts.publish(t, s, p)
			all = append(all, p)
		}
	}
	return all
}

// sameSet fails t unless got holds exactly the records of want, each once.
func sameSet(t *testing.T, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		dups := map[string]int{}
		for _, x := range g {
			dups[x]++
		}
		var twice []string
		for x, n := range dups {
			if n > 1 {
				twice = append(twice, x)
			}
		}
		t.Fatalf("read %d records, want %d (twice: %v)", len(g), len(w), twice)
	}
}

func TestBoundedSourceReadsEachMessageOnceAtAnyParallelism(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	subjects := []string{"in.a", "in.b", "in.c", "in.d", "in.e"}
	want := publishSpread(t, ts, subjects, 40)
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			s := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true}
			var readers []dataflow.SourceReader
			for i := 0; i < p; i++ {
				readers = append(readers, open(t, s, i, p, nil))
			}
			ts.publish(t, "in.a", "after the run started") // past the bound
			var got []string
			for _, r := range readers {
				got = append(got, drain(t, r)...)
			}
			sameSet(t, got, want)
			want = append(want, "after the run started") // for the next run
		})
	}
}

func TestSourceFilterReadsOnlyMatchingSubjects(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	want := publishSpread(t, ts, []string{"in.x.1", "in.x.2"}, 5)
	publishSpread(t, ts, []string{"in.y.1"}, 5)
	for _, p := range []int{1, 2} {
		s := &Source{Conn: ts.conn(), Stream: "IN", Subjects: []string{"in.x.*"}, Bounded: true}
		var got []string
		for i := 0; i < p; i++ {
			got = append(got, drain(t, open(t, s, i, p, nil))...)
		}
		sameSet(t, got, want)
	}
}

// TestSourceRestoresFromItsPosition reads part of the stream, takes the position, and opens
// again from it (a restore) after more messages came: the two runs together read every
// message exactly once, at parallelism 1 and 2.
func TestSourceRestoresFromItsPosition(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			ts := startServer(t)
			ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
			subjects := []string{"in.a", "in.b", "in.c"}
			want := publishSpread(t, ts, subjects, 30)
			s := &Source{Conn: ts.conn(), Stream: "IN"}
			var got []string
			positions := make([][]byte, p)
			for i := 0; i < p; i++ {
				r := open(t, s, i, p, nil)
				got = append(got, readN(t, r, 20)...)
				var err error
				if positions[i], err = r.Position(); err != nil {
					t.Fatal(err)
				}
				r.Close()
			}
			want = append(want, publishSpread(t, ts, subjects, 5)...)
			again := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true}
			for i := 0; i < p; i++ {
				got = append(got, drain(t, open(t, again, i, p, positions[i]))...)
			}
			sameSet(t, got, want)
		})
	}
}

// TestSourceRedistributesPositionsOnRescale reads part of the stream at one parallelism and
// the rest at another from the redistributed positions: exactly once, for 2 -> 3 and 3 -> 1.
func TestSourceRedistributesPositionsOnRescale(t *testing.T) {
	for _, ps := range [][2]int{{2, 3}, {3, 1}, {1, 2}} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			ts := startServer(t)
			ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
			subjects := []string{"in.a", "in.b", "in.c", "in.d", "in.e", "in.f", "in.g"}
			want := publishSpread(t, ts, subjects, 20)
			s := &Source{Conn: ts.conn(), Stream: "IN"}
			var got []string
			old := make([][]byte, ps[0])
			for i := range old {
				r := open(t, s, i, ps[0], nil)
				got = append(got, readN(t, r, 10)...)
				old[i], _ = r.Position()
				r.Close()
			}
			want = append(want, publishSpread(t, ts, append(subjects, "in.new"), 3)...)
			again := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true}
			states, err := again.Redistribute(old, ps[1])
			if err != nil {
				t.Fatal(err)
			}
			if len(states) != ps[1] {
				t.Fatalf("%d states, want %d", len(states), ps[1])
			}
			for i, st := range states {
				got = append(got, drain(t, open(t, again, i, ps[1], st))...)
			}
			sameSet(t, got, want)
		})
	}
}

func TestSourceStartModes(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	before := publishSpread(t, ts, []string{"in.a", "in.b"}, 5)
	mid := time.Now()
	seqs := ts.publish(t, "in.a", "a-mid-0", "a-mid-1")
	ts.publish(t, "in.b", "b-mid-0")
	cases := []struct {
		name string
		s    Source
		want []string
	}{
		{"earliest", Source{StartMode: StartEarliest}, append(slices.Clone(before), "a-mid-0", "a-mid-1", "b-mid-0", "late")},
		{"latest", Source{StartMode: StartLatest}, []string{"late"}},
		{"timestamp", Source{StartMode: StartTimestamp, StartTime: mid}, []string{"a-mid-0", "a-mid-1", "b-mid-0", "late"}},
		{"sequence", Source{StartMode: StartSequence, StartSequence: seqs[1]}, []string{"a-mid-1", "b-mid-0", "late"}},
	}
	readers := make([]dataflow.SourceReader, len(cases))
	for i := range cases {
		s := &cases[i].s
		s.Conn, s.Stream = ts.conn(), "IN"
		readers[i] = open(t, s, 0, 1, nil)
	}
	ts.publish(t, "in.b", "late")
	for i := range cases {
		c := &cases[i]
		t.Run(c.name, func(t *testing.T) {
			got := readN(t, readers[i], len(c.want))
			if !slices.Equal(got, c.want) {
				t.Fatalf("read %q, want %q", got, c.want)
			}
		})
	}
}

// TestSourceDiscoversNewSubjectsWhileRunning: a subject that appears after the subtasks
// opened is read by the subtask it hashes to.
func TestSourceDiscoversNewSubjectsWhileRunning(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	want := publishSpread(t, ts, []string{"in.a", "in.b"}, 3)
	s := &Source{Conn: ts.conn(), Stream: "IN", DiscoveryInterval: 20 * time.Millisecond}
	const p = 2
	readers := []dataflow.SourceReader{open(t, s, 0, p, nil), open(t, s, 1, p, nil)}
	var got []string
	read := func() {
		for _, r := range readers {
			if err := r.Read(context.Background(), 100, func(rec any) { got = append(got, rec.(string)) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	testwait.For(t, "the first records", 10*time.Second, func() error {
		read()
		if len(got) < len(want) {
			return fmt.Errorf("%d records", len(got))
		}
		return nil
	})
	for i := 0; i < 6; i++ {
		subj := fmt.Sprintf("in.new%d", i)
		ts.publish(t, subj, subj)
		want = append(want, subj)
	}
	testwait.For(t, "the records of the new subjects", 10*time.Second, func() error {
		read()
		if len(got) < len(want) {
			return fmt.Errorf("%d of %d records", len(got), len(want))
		}
		return nil
	})
	sameSet(t, got, want)
}

func TestSourceRefusesARetentionGapByName(t *testing.T) {
	ts := startServer(t)
	st := ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	publishSpread(t, ts, []string{"in.a"}, 10)
	s := &Source{Conn: ts.conn(), Stream: "IN", Keys: &SourceKeys{OnRetentionGap: "source.jetstream.on-retention-gap"}}
	r := open(t, s, 0, 1, nil)
	readN(t, r, 4)
	pos, _ := r.Position()
	r.Close()
	if err := st.Purge(context.Background(), jetstream.WithPurgeSequence(8)); err != nil {
		t.Fatal(err)
	}
	again := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true, Keys: s.Keys}
	_, err := again.Open(context.Background(), 0, 1, pos)
	if err == nil {
		t.Fatal("a restore past the stream's retention was not refused")
	}
	for _, want := range []string{`stream "IN"`, "sequence 8", "in.a from sequence 5", "source.jetstream.on-retention-gap=skip"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !restart.IsPermanent(err) {
		t.Errorf("error %q is not permanent", err)
	}
	skip := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true, SkipRetentionGaps: true}
	got := drain(t, open(t, skip, 0, 1, pos))
	if want := []string{"in.a-7", "in.a-8", "in.a-9"}; !slices.Equal(got, want) {
		t.Fatalf("read %q after skipping the gap, want %q", got, want)
	}
}

func TestSourceDecodeErrorNamesStreamAndSequence(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	ts.publish(t, "in.a", "good 1")
	bad := ts.publish(t, "in.a", "\xff\xfe not utf-8")[0]
	ts.publish(t, "in.a", "good 2")
	s := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true}
	r := open(t, s, 0, 1, nil)
	var err error
	for err == nil {
		err = r.Read(context.Background(), 100, func(any) {})
	}
	for _, want := range []string{`stream "IN"`, fmt.Sprintf("sequence %d", bad), "UTF-8"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !restart.IsPermanent(err) {
		t.Errorf("error %q is not permanent", err)
	}
	skip := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true, SkipDecodeErrors: true}
	if got := drain(t, open(t, skip, 0, 1, nil)); !slices.Equal(got, []string{"good 1", "good 2"}) {
		t.Fatalf("read %q, want the two good messages", got)
	}
	if n := skip.Skipped(); n != 1 {
		t.Fatalf("skipped %d, want 1", n)
	}
}

func TestSourceMissingStreamNamesStreamAndServer(t *testing.T) {
	ts := startServer(t)
	s := &Source{Conn: ts.conn(), Stream: "NOPE"}
	for name, err := range map[string]error{"preflight": s.Preflight(context.Background()), "open": openErr(s)} {
		if err == nil || !strings.Contains(err.Error(), `stream "NOPE" not found`) || !strings.Contains(err.Error(), ts.ClientURL()) {
			t.Errorf("%s: %v, want an error naming the stream and %s", name, err, ts.ClientURL())
		}
	}
}

func openErr(s *Source) error {
	r, err := s.Open(context.Background(), 0, 1, nil)
	if err == nil {
		r.Close()
	}
	return err
}

func TestSourceRefusesARecreatedStream(t *testing.T) {
	ts := startServer(t)
	cfg := jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}
	ts.stream(t, cfg)
	publishSpread(t, ts, []string{"in.a"}, 3)
	s := &Source{Conn: ts.conn(), Stream: "IN"}
	r := open(t, s, 0, 1, nil)
	readN(t, r, 3)
	pos, _ := r.Position()
	r.Close()
	if err := ts.js.DeleteStream(context.Background(), "IN"); err != nil {
		t.Fatal(err)
	}
	ts.stream(t, cfg)
	_, err := (&Source{Conn: ts.conn(), Stream: "IN"}).Open(context.Background(), 0, 1, pos)
	if err == nil || !strings.Contains(err.Error(), "deleted and created again") || !restart.IsPermanent(err) {
		t.Fatalf("restore onto a recreated stream: %v, want a permanent refusal", err)
	}
}

// TestSourceRefusesAFilterTheStreamCannotMatch: a subject filter no subject of the
// stream's can match (a typo: zzz.> on a stream of in.>) is refused for good, naming the
// filter, its key, the stream and its subjects, where it read nothing and ended as if the
// stream were empty; a filter that matches some of the stream's subjects, even with no
// message yet, opens.
func TestSourceRefusesAFilterTheStreamCannotMatch(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>", "other.*"}})
	publishSpread(t, ts, []string{"in.a"}, 3)
	keys := &SourceKeys{Subjects: "source.jetstream.subjects"}
	for _, filter := range []string{"zzz.>", "in", "other.a.b", "other"} {
		_, err := (&Source{Conn: ts.conn(), Stream: "IN", Subjects: []string{"in.a", filter}, Bounded: true, Keys: keys}).Open(context.Background(), 0, 1, nil)
		if err == nil || !restart.IsPermanent(err) {
			t.Fatalf("filter %q: %v; want a permanent refusal", filter, err)
		}
		for _, want := range []string{fmt.Sprintf("subject filter %q", filter), "source.jetstream.subjects", `stream "IN"`, "in.>, other.*"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("filter %q: error %q does not say %q", filter, err, want)
			}
		}
	}
	for _, filter := range []string{"in.*", ">", "*.a", "other.x", "in.nothing.yet"} {
		r := open(t, &Source{Conn: ts.conn(), Stream: "IN", Subjects: []string{filter}, Bounded: true, Keys: keys}, 0, 1, nil)
		r.Close()
	}
}

package jetstream

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// recorder is the ConnectorEvents of a test: what a reader or writer last reported.
type recorder struct {
	mu      sync.Mutex
	pending map[string]int64
	lag     time.Duration
	lagSet  bool
	commits [][2]int
	took    []time.Duration
}

var _ dataflow.ConnectorEvents = (*recorder)(nil)

func (r *recorder) SplitPending(split string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]int64{}
	}
	r.pending[split] = n
}

func (r *recorder) EmitEventTimeLag(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lag, r.lagSet = d, true
}

func (r *recorder) Committed(records, batches int, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits = append(r.commits, [2]int{records, batches})
	r.took = append(r.took, d)
}

func (r *recorder) pendingNow() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.pending)
}

// waitPending measures rd until it has reported want for every split of want.
func waitPending(t *testing.T, rd dataflow.SourceReader, rec *recorder, want map[string]int64) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("pending records %v", want), 10*time.Second, func() error {
		rd.(*reader).measure()
		if got := rec.pendingNow(); !maps.Equal(got, want) {
			return fmt.Errorf("pending records %v", got)
		}
		return nil
	})
}

// expectedPending is each subject's last sequence minus the sequence the reader is done
// through, computed from the sequences the publisher got back.
func expectedPending(seqs map[string][]uint64, through uint64) map[string]int64 {
	want := map[string]int64{}
	for subj, s := range seqs {
		last := s[len(s)-1]
		want[subj] = int64(last - min(last, through))
	}
	return want
}

func TestSourceReportsEachSplitsPendingRecordsAndTheEmitLag(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	before := time.Now()
	seqs := map[string][]uint64{}
	var order []uint64 // every sequence, in order
	for i := 0; i < 6; i++ {
		for _, subj := range []string{"in.a", "in.b"} {
			if subj == "in.b" && i >= 3 {
				continue
			}
			s := ts.publish(t, subj, fmt.Sprintf("%s-%d", subj, i))
			seqs[subj] = append(seqs[subj], s...)
			order = append(order, s...)
		}
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("parallelism %d", p), func(t *testing.T) {
			src := &Source{Conn: ts.conn(), Stream: "IN"}
			// Subtask 0 of p; at parallelism 2 it reads the subjects that hash to it.
			mine := map[string][]uint64{}
			var myOrder []uint64
			for subj, s := range seqs {
				if partition(subj, p) == 0 {
					mine[subj] = s
				}
			}
			for _, seq := range order {
				for _, s := range mine {
					for _, x := range s {
						if x == seq {
							myOrder = append(myOrder, seq)
						}
					}
				}
			}
			if len(myOrder) < 2 {
				t.Fatalf("subtask 0 of %d reads %d messages: the subjects' hashes give it too few for the test", p, len(myOrder))
			}
			rd := open(t, src, 0, p, nil)
			rec := &recorder{}
			rd.(dataflow.Measured).Measure(rec)
			n := len(myOrder) / 2
			readN(t, rd, n)
			rec.mu.Lock()
			lag, lagSet := rec.lag, rec.lagSet
			rec.mu.Unlock()
			if !lagSet || lag < 0 || lag > time.Since(before) {
				t.Fatalf("emit lag %s (reported %v), want between 0 and %s, the time since the first publish", lag, lagSet, time.Since(before))
			}
			waitPending(t, rd, rec, expectedPending(mine, myOrder[n-1]))
			readN(t, rd, len(myOrder)-n)
			rd.(*reader).lag.asked = time.Time{} // the next probe now, not in lagInterval
			waitPending(t, rd, rec, expectedPending(mine, myOrder[len(myOrder)-1]))
		})
	}
}

func TestSinkReportsItsCommits(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, time.Minute)
	s := newSink(ts)
	s.BatchSize = 3 // two records and the marker per part
	w := openSink(t, s, 0, 1, nil)
	rec := &recorder{}
	w.(dataflow.Measured).Measure(rec)
	write(t, w, records("a", 5)...)
	if _, err := w.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 2); err != nil { // nothing to commit: nothing reported
		t.Fatal(err)
	}
	exactly(t, ts, records("a", 5))
	if want := [][2]int{{5, 3}}; fmt.Sprint(rec.commits) != fmt.Sprint(want) {
		t.Fatalf("commits reported %v, want %v (records, batches)", rec.commits, want)
	}
	if rec.took[0] <= 0 {
		t.Fatalf("commit took %s", rec.took[0])
	}
}

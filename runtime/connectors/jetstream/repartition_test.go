package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/state"
)

// newRepartition is the exchange of the tests on stream REPART: records are strings, each
// its own key, encoded as its bytes; 10 key groups, so that the partitions' ranges differ
// in size.
func newRepartition(conn Conn, partitions int) *Repartition {
	return &Repartition{Conn: conn, Stream: "REPART", Job: "wc", Exchange: 1, Partitions: partitions, MaxParallelism: 10,
		Key:    func(rec any) []byte { return []byte(rec.(string)) },
		Encode: func(b []byte, rec any) ([]byte, error) { return append(b, rec.(string)...), nil },
		Decode: func(b []byte) (any, error) { return string(b), nil }}
}

// repartFixture starts a server with the repartition stream REPART and returns it with
// the exchange of partitions partitions.
func repartFixture(t *testing.T, partitions int) (*testServer, *Repartition) {
	t.Helper()
	ts := startServer(t)
	if err := EnsureRepartitionStream(context.Background(), ts.conn(), "REPART", 1); err != nil {
		t.Fatal(err)
	}
	return ts, newRepartition(ts.conn(), partitions)
}

func openRepartWriter(t *testing.T, r *Repartition, task int, state []byte) dataflow.SinkWriter {
	t.Helper()
	w, err := r.Sink(task).Open(context.Background(), 0, 1, state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func openRepartReader(t *testing.T, r *Repartition, partition, writers int, pos []byte) dataflow.SourceReader {
	t.Helper()
	rd, err := r.Source(partition, writers).Open(context.Background(), 0, 1, pos)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

// checkpointRepart pre-commits and commits checkpoint id and waits for the commit, without
// ending the writer's input (its Flush would).
func checkpointRepart(t *testing.T, w dataflow.SinkWriter, id int64) []byte {
	t.Helper()
	st, err := w.PreCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(id); err != nil {
		t.Fatal(err)
	}
	if err := w.(*repartWriter).w.Flush(); err != nil {
		t.Fatal(err)
	}
	return st
}

// finish writes recs, commits them as checkpoint id and ends the writer's input, as a
// task whose input ends does; it returns the checkpoint's sink state.
func finish(t *testing.T, w dataflow.SinkWriter, id int64, recs ...string) []byte {
	t.Helper()
	write(t, w, recs...)
	st := checkpointRepart(t, w, id)
	endInput(t, w)
	return st
}

// endInput ends the writer's input, as the run does after its last commit.
func endInput(t *testing.T, w dataflow.SinkWriter) {
	t.Helper()
	if err := w.(dataflow.Flusher).Flush(); err != nil {
		t.Fatal(err)
	}
}

// readToEnd reads rd until it ends and returns what it emitted; it fails t if rd does not
// end within a minute.
func readToEnd(t *testing.T, rd dataflow.SourceReader) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []string
	for {
		err := rd.Read(ctx, 100, func(rec any) { got = append(got, rec.(string)) })
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("read (after %d records): %v", len(got), err)
		}
	}
}

// doneThrough returns the stream sequence up to which rd's position is done with subject.
func doneThrough(t *testing.T, rd dataflow.SourceReader, subject string) uint64 {
	t.Helper()
	b, err := rd.Position()
	if err != nil {
		t.Fatal(err)
	}
	var rp repartPosition
	var p position
	if err := json.Unmarshal(b, &rp); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rp.Source, &p); err != nil {
		t.Fatal(err)
	}
	return max(p.Others, p.Subjects[subject])
}

// readThrough reads rd until its position is done with partition's subject up to the
// subject's last message now in the stream, and fails t if rd ends before.
func readThrough(t *testing.T, ts *testServer, r *Repartition, rd dataflow.SourceReader, partition int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := ts.js.Stream(ctx, r.Stream)
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.GetLastMsgForSubject(ctx, r.Subject(partition))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for doneThrough(t, rd, r.Subject(partition)) < last.Sequence {
		err := rd.Read(ctx, 100, func(rec any) { got = append(got, rec.(string)) })
		if errors.Is(err, io.EOF) {
			t.Fatalf("the reader of partition %d ended at sequence %d, before its writers did", partition, doneThrough(t, rd, r.Subject(partition)))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// sameRecords fails t unless got and want hold the same records, each as often.
func sameRecords(t *testing.T, got, want []string) {
	t.Helper()
	g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if slices.Equal(g, w) {
		return
	}
	count := map[string]int{}
	for _, x := range got {
		count[x]++
	}
	for _, x := range want {
		count[x]--
	}
	var diff []string
	for x, n := range count {
		if n != 0 {
			diff = append(diff, fmt.Sprintf("%s:%+d", x, n))
		}
	}
	slices.Sort(diff)
	t.Fatalf("read %d records, want %d; off by (record:extra) %.500v", len(got), len(want), diff)
}

// frames returns the messages on the exchange's data subjects, by kind: data or end.
func frames(t *testing.T, ts *testServer, r *Repartition) (data, end []stored) {
	t.Helper()
	for _, m := range ts.read(t, r.Stream, "flowstate."+r.Stream+".data.") {
		if len(m.Data) > 1 && m.Data[1] == frameEnd {
			end = append(end, m)
		} else {
			data = append(data, m)
		}
	}
	return data, end
}

// TestRepartitionIsExactlyOnceAcrossACrash: writer 0 fails after committing two parts of
// its first checkpoint, as a runner killed then would, and is restored from that
// checkpoint; writer 1 runs through. Every partition's reader ends once both writers
// ended, and together they read each record exactly once, each on the partition whose
// key-group range holds its key's group.
func TestRepartitionIsExactlyOnceAcrossACrash(t *testing.T) {
	ts, r := repartFixture(t, 3)
	r.FrameBytes, r.BatchSize = 64, 4 // a few records a frame, 3 frames and a marker a batch
	crashing := *r
	crashing.failAfterParts = 2
	w0 := openRepartWriter(t, &crashing, 0, nil)
	write(t, w0, records("a", 200)...)
	st, err := w0.PreCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w0.Commit(1); err != nil {
		t.Fatal(err)
	}
	if err := w0.(dataflow.Flusher).Flush(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("writer 0's commit: %v, want the injected failure", err)
	}
	w0.Close()
	if data, _ := frames(t, ts, r); len(data) != 6 {
		t.Fatalf("%d frames after two parts of 3, want 6", len(data))
	}
	w1 := openRepartWriter(t, r, 1, nil)
	write(t, w1, records("b", 150)...)
	checkpointRepart(t, w1, 1)
	finish(t, w1, 2, records("c", 50)...)

	w0 = openRepartWriter(t, r, 0, st) // the restore commits the parts the chain does not show
	finish(t, w0, 2, records("d", 30)...)

	var all []string
	for p := range r.Partitions {
		got := readToEnd(t, openRepartReader(t, r, p, 2, nil))
		kgs := state.KeyGroupRangeFor(r.MaxParallelism, r.Partitions, p)
		for _, rec := range got {
			if g := state.KeyGroupFor([]byte(rec), r.MaxParallelism); g < kgs.Start || g >= kgs.End {
				t.Fatalf("record %q (key group %d) read on partition %d, whose key groups are %d to %d", rec, g, p, kgs.Start, kgs.End-1)
			}
		}
		all = append(all, got...)
	}
	want := slices.Concat(records("a", 200), records("b", 150), records("c", 50), records("d", 30))
	sameRecords(t, all, want)
	data, end := frames(t, ts, r)
	if len(data) >= len(want)/3 {
		t.Errorf("%d frames for %d records: frames hold few records", len(data), len(want))
	}
	if len(end) != 2*r.Partitions {
		t.Errorf("%d end frames, want one per writer and partition, %d", len(end), 2*r.Partitions)
	}
}

// TestRepartitionPacksManyRecordsToAFrameByKeyGroup: 20000 8-byte words go out in a few
// frames of the default size, each word on the partition whose key-group range (computed
// here from state.KeyGroupRangeFor) holds its key's group.
func TestRepartitionPacksManyRecordsToAFrameByKeyGroup(t *testing.T) {
	ts, r := repartFixture(t, 3)
	w := openRepartWriter(t, r, 0, nil)
	want := make([]string, 20000)
	for i := range want {
		want[i] = fmt.Sprintf("w%07d", i)
	}
	finish(t, w, 1, want...)
	data, _ := frames(t, ts, r)
	if len(data)*1000 > len(want) {
		t.Fatalf("%d data messages for %d records, want at least 1000 records a message", len(data), len(want))
	}
	ranges := make([]int, r.MaxParallelism) // key group -> partition, from the ranges
	for p := range r.Partitions {
		kgs := state.KeyGroupRangeFor(r.MaxParallelism, r.Partitions, p)
		for g := kgs.Start; g < kgs.End; g++ {
			ranges[g] = p
		}
	}
	var all []string
	for p := range r.Partitions {
		got := readToEnd(t, openRepartReader(t, r, p, 1, nil))
		if len(got) == 0 {
			t.Fatalf("partition %d read nothing", p)
		}
		for _, rec := range got {
			if g := state.KeyGroupFor([]byte(rec), r.MaxParallelism); ranges[g] != p {
				t.Fatalf("record %q of key group %d read on partition %d, its range is partition %d's", rec, g, p, ranges[g])
			}
		}
		all = append(all, got...)
	}
	sameRecords(t, all, want)
}

// TestRepartitionReaderEndsOnlyOnceEveryWriterEnded: writer 0 ends twice (it ended, was
// restored, and ended again): the reader, which has read all of it, does not end, since
// writer 1 has not; once writer 1 ends, it ends with every record read once.
func TestRepartitionReaderEndsOnlyOnceEveryWriterEnded(t *testing.T) {
	ts, r := repartFixture(t, 1)
	w0 := openRepartWriter(t, r, 0, nil)
	st := finish(t, w0, 1, records("a", 20)...)
	w0.Close()
	w0 = openRepartWriter(t, r, 0, st) // a crash after the end, and a restore
	endInput(t, w0)
	if _, end := frames(t, ts, r); len(end) != 2 {
		t.Fatalf("%d end frames, want writer 0's two", len(end))
	}
	rd := openRepartReader(t, r, 0, 2, nil)
	got := readThrough(t, ts, r, rd, 0)
	for range 3 { // it has read everything there is, and still does not end
		if err := rd.Read(context.Background(), 100, func(rec any) { got = append(got, rec.(string)) }); err != nil {
			t.Fatalf("read after writer 0's two ends: %v, want nothing (writer 1 has not ended)", err)
		}
	}
	sameRecords(t, got, records("a", 20))
	w1 := openRepartWriter(t, r, 1, nil)
	finish(t, w1, 1, records("b", 5)...)
	got = append(got, readToEnd(t, rd)...)
	sameRecords(t, got, append(records("a", 20), records("b", 5)...))
}

// TestRepartitionReadsAWriterThatRunsAgainAfterItsEnd: both writers ended, and then
// writer 0 opened again (a resumed task) before the reader came: the reader does not end
// at the end frames it reads, but reads what writer 0 writes next, and ends after writer
// 0's new end. A reader restored from its position at the end ends at once, emitting
// nothing again.
func TestRepartitionReadsAWriterThatRunsAgainAfterItsEnd(t *testing.T) {
	ts, r := repartFixture(t, 1)
	w0 := openRepartWriter(t, r, 0, nil)
	st := finish(t, w0, 1, records("a", 10)...)
	w0.Close()
	w1 := openRepartWriter(t, r, 1, nil)
	finish(t, w1, 1, records("b", 10)...)
	w0 = openRepartWriter(t, r, 0, st) // resumed: its chain shows a new run

	rd := openRepartReader(t, r, 0, 2, nil)
	got := readThrough(t, ts, r, rd, 0)
	if err := rd.Read(context.Background(), 100, func(rec any) { got = append(got, rec.(string)) }); err != nil {
		t.Fatalf("read past both end frames: %v, want nothing (writer 0 runs again)", err)
	}
	finish(t, w0, 2, records("c", 10)...)
	got = append(got, readToEnd(t, rd)...)
	sameRecords(t, got, slices.Concat(records("a", 10), records("b", 10), records("c", 10)))
	pos, err := rd.Position()
	if err != nil {
		t.Fatal(err)
	}
	if again := readToEnd(t, openRepartReader(t, r, 0, 2, pos)); len(again) != 0 {
		t.Fatalf("a reader restored at the end read %q again", again)
	}
}

// TestRepartitionReaderRestoresItsPositionExactly: a reader stopped mid-stream (mid-way
// through the frames, each of several records) and restored from its position emits
// exactly the records after it. A Read emits at most max records and the rest of the frame
// the max falls in.
func TestRepartitionReaderRestoresItsPositionExactly(t *testing.T) {
	ts, r := repartFixture(t, 1)
	r.FrameBytes = 64 // 9 records of 5 bytes and their lengths after the 6 of the header
	w := openRepartWriter(t, r, 0, nil)
	want := records("r", 300)[100:] // r-100 to r-399: 5 bytes each
	finish(t, w, 1, want...)
	perFrame := 0
	if data, _ := frames(t, ts, r); len(data) > 0 {
		perFrame = (len(want) + len(data) - 1) / len(data)
	}
	if perFrame < 4 {
		t.Fatalf("about %d records a frame, want several", perFrame)
	}
	rd := openRepartReader(t, r, 0, 1, nil)
	var got []string
	ctx := context.Background()
	for len(got) < 100 {
		n := 0
		if err := rd.Read(ctx, 3, func(rec any) { n++; got = append(got, rec.(string)) }); err != nil {
			t.Fatal(err)
		}
		if n > 3+perFrame-1 {
			t.Fatalf("a Read of at most 3 emitted %d records, frames hold about %d", n, perFrame)
		}
	}
	pos, err := rd.Position()
	if err != nil {
		t.Fatal(err)
	}
	rest := readToEnd(t, openRepartReader(t, r, 0, 1, pos))
	if all := append(slices.Clone(got), rest...); !slices.Equal(all, want) {
		t.Fatalf("read %d, then %d after the restore; want %d in order: %.300q", len(got), len(rest), len(want), all)
	}
	other := *r
	other.Exchange = 2
	if _, err := other.Source(0, 1).Open(ctx, 0, 1, pos); err == nil || !strings.Contains(err.Error(), "exchange 1 partition 0") {
		t.Fatalf("exchange 2's reader restored exchange 1's position: %v", err)
	}
}

// TestRepartitionFencesAZombieWriter: a writer of lease epoch 2 restores the checkpoint of
// one of epoch 1, which is still running: the old writer can neither commit nor end the
// input any more, nor open again, and the reader reads each record once.
func TestRepartitionFencesAZombieWriter(t *testing.T) {
	ts, old := repartFixture(t, 2)
	cur := newRepartition(ts.conn(), 2)
	old.Epoch = func() int64 { return 1 }
	cur.Epoch = func() int64 { return 2 }
	zombie := openRepartWriter(t, old, 0, nil)
	write(t, zombie, records("a", 10)...)
	st := checkpointRepart(t, zombie, 1)
	write(t, zombie, records("z", 10)...)
	if _, err := zombie.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	w := openRepartWriter(t, cur, 0, st) // the task, taken over at lease epoch 2
	if err := w.(*repartWriter).w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.Commit(2); err != nil {
		t.Fatal(err)
	}
	if err := zombie.(*repartWriter).w.Flush(); err == nil || !strings.Contains(err.Error(), "fenced") || !restart.IsPermanent(err) {
		t.Fatalf("the zombie's commit: %v, want it fenced for good", err)
	}
	if err := zombie.(dataflow.Flusher).Flush(); err == nil {
		t.Fatal("the zombie ended the input")
	}
	if _, end := frames(t, ts, old); len(end) != 0 {
		t.Fatalf("%d end frames of the zombie", len(end))
	}
	if _, err := old.Sink(0).Open(context.Background(), 0, 1, st); err == nil || !strings.Contains(err.Error(), "lease epoch 2") || !restart.IsPermanent(err) {
		t.Fatalf("the zombie opened again: %v, want it refused for the newer lease", err)
	}
	finish(t, w, 2, records("b", 10)...)
	var all []string
	for p := range 2 {
		all = append(all, readToEnd(t, openRepartReader(t, cur, p, 1, nil))...)
	}
	sameRecords(t, all, append(records("a", 10), records("b", 10)...))
}

// TestRepartitionZombieCannotEndTheInput: a zombie whose commits all landed before the
// takeover tries to end the input after it: its end frames are refused, fenced.
func TestRepartitionZombieCannotEndTheInput(t *testing.T) {
	ts, r := repartFixture(t, 2)
	zombie := openRepartWriter(t, r, 0, nil)
	write(t, zombie, records("a", 10)...)
	st := checkpointRepart(t, zombie, 1)
	openRepartWriter(t, r, 0, st)
	if err := zombie.(dataflow.Flusher).Flush(); err == nil || !strings.Contains(err.Error(), "fenced") || !strings.Contains(err.Error(), "end of input") {
		t.Fatalf("the zombie's end: %v, want it fenced", err)
	}
	if _, end := frames(t, ts, r); len(end) != 0 {
		t.Fatalf("%d end frames of the zombie", len(end))
	}
}

// TestRepartitionReaderRefusesAFrameThatDoesNotDecode names the stream, the subject and
// the sequence of a message on a partition's subject that is no frame of the exchange.
func TestRepartitionReaderRefusesAFrameThatDoesNotDecode(t *testing.T) {
	for name, payload := range map[string][]byte{
		"garbage":        []byte("hello"),
		"cut short":      append(appendFrameHeader(nil, frameHeader{kind: frameData, partitions: 1, maxParallelism: 10}), 9, 'x'),
		"other exchange": appendFrameHeader(nil, frameHeader{kind: frameEnd, partitions: 4, maxParallelism: 10}),
		"unknown writer": appendFrameHeader(nil, frameHeader{kind: frameEnd, task: 5, partitions: 1, maxParallelism: 10}),
	} {
		t.Run(name, func(t *testing.T) {
			ts, r := repartFixture(t, 1)
			seq := ts.publish(t, r.Subject(0), string(payload))[0]
			rd := openRepartReader(t, r, 0, 2, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			for err == nil {
				err = rd.Read(ctx, 10, func(any) { t.Fatal("emitted a record") })
			}
			for _, want := range []string{`stream "REPART"`, fmt.Sprintf("sequence %d", seq), r.Subject(0)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %s", err, want)
				}
			}
			if !restart.IsPermanent(err) {
				t.Errorf("not permanent: %v", err)
			}
		})
	}
}

// TestEnsureRepartitionStreamCreatesOrRefusesByName creates the stream, takes it as it is
// a second time, and refuses, naming the stream and the setting, streams that lack atomic
// publish, have other replicas, do not capture the subjects, keep memory or limits.
func TestEnsureRepartitionStreamCreatesOrRefusesByName(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	for range 2 {
		if err := EnsureRepartitionStream(ctx, ts.conn(), "JOB", 1); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ts.js.Stream(ctx, "JOB")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config; !c.AllowAtomicPublish || c.Storage != jetstream.FileStorage || !slices.Equal(c.Subjects, RepartitionSubjects("JOB")) {
		t.Fatalf("created %+v", c)
	}
	if err := EnsureRepartitionStream(ctx, ts.conn(), "JOB", 3); err == nil || !strings.Contains(err.Error(), `"JOB"`) || !strings.Contains(err.Error(), "replicas 1") {
		t.Fatalf("the R1 stream for 3 replicas: %v", err)
	}
	for _, c := range []struct {
		name string
		cfg  jetstream.StreamConfig
		want string
	}{
		{"NOATOMIC", jetstream.StreamConfig{Subjects: RepartitionSubjects("NOATOMIC")}, "allow_atomic"},
		{"FEW", jetstream.StreamConfig{Subjects: RepartitionSubjects("FEW")[:1], AllowAtomicPublish: true}, "does not capture flowstate.FEW.markers.>"},
		{"MEM", jetstream.StreamConfig{Subjects: RepartitionSubjects("MEM"), AllowAtomicPublish: true, Storage: jetstream.MemoryStorage}, "storage"},
		{"AGED", jetstream.StreamConfig{Subjects: RepartitionSubjects("AGED"), AllowAtomicPublish: true, MaxAge: time.Hour}, "max age 1h0m0s"},
	} {
		c.cfg.Name = c.name
		ts.stream(t, c.cfg)
		err := EnsureRepartitionStream(ctx, ts.conn(), c.name, 1)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.name)) || !strings.Contains(err.Error(), c.want) || !restart.IsPermanent(err) {
			t.Errorf("stream %s: %v, want a permanent refusal naming it and saying %q", c.name, err, c.want)
		}
	}
}

// TestRepartitionOnAReplicatedStreamThroughANodeKill runs the exchange on an R3 stream of
// a 3-node cluster of real servers (whose compare-and-swap refusals carry other error
// codes than a single node's), and kills the stream's leader between two checkpoints:
// the writers go on once the two nodes left elect a leader, and the readers read every
// record once.
func TestRepartitionOnAReplicatedStreamThroughANodeKill(t *testing.T) {
	c := natstest.StartCluster(t, 3, natstest.Options{})
	ctx := context.Background()
	conn := Conn{Servers: c.URLs()}
	for range 2 {
		if err := EnsureRepartitionStream(ctx, conn, "REPART", 3); err != nil {
			t.Fatal(err)
		}
	}
	r := newRepartition(conn, 2)
	r.FrameBytes, r.BatchSize = 128, 5
	ws := []dataflow.SinkWriter{openRepartWriter(t, r, 0, nil), openRepartWriter(t, r, 1, nil)}
	for i, w := range ws {
		write(t, w, records(fmt.Sprint("a", i), 300)...)
		checkpointRepart(t, w, 1)
	}
	js := c.JetStream(t)
	st, err := js.Stream(ctx, "REPART")
	if err != nil {
		t.Fatal(err)
	}
	leader := c.NodeNamed(st.CachedInfo().Cluster.Leader)
	if leader == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", st.CachedInfo().Cluster.Leader)
	}
	leader.Kill()
	c.WaitMetaLeader()
	testwait.For(t, "a new leader of the stream, and the writers connected", time.Minute, func() error {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster.Leader == "" || info.Cluster.Leader == leader.Name() {
			return fmt.Errorf("leader %q", info.Cluster.Leader)
		}
		for i, w := range ws {
			if !w.(*repartWriter).w.nc.IsConnected() {
				return fmt.Errorf("writer %d is not connected", i)
			}
		}
		return nil
	})
	var want []string
	for i, w := range ws {
		finish(t, w, 2, records(fmt.Sprint("b", i), 300)...)
		want = slices.Concat(want, records(fmt.Sprint("a", i), 300), records(fmt.Sprint("b", i), 300))
	}
	var all []string
	for p := range r.Partitions {
		all = append(all, readToEnd(t, openRepartReader(t, r, p, 2, nil))...)
	}
	sameRecords(t, all, want)
}

package jetstream

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// BenchmarkSourceAgainstOrderedConsumer reads the same stream of 32-byte messages with a
// bare ordered consumer (the raw limit) and with a Source subtask, and reports the ratio
// of their rates (the target: at least 0.7).
func BenchmarkSourceAgainstOrderedConsumer(b *testing.B) {
	const n = 200_000
	ts := startServer(b)
	ts.stream(b, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	payload := []byte("0123456789abcdef0123456789abcdef")
	var last jetstream.PubAckFuture
	for i := 0; i < n; i++ {
		var err error
		if last, err = ts.js.PublishAsync(fmt.Sprintf("in.p%d", i%4), payload); err != nil {
			b.Fatal(err)
		}
	}
	<-last.Ok()
	raw := func() time.Duration {
		nc, err := nats.Connect(ts.ClientURL())
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		st, _ := js.Stream(context.Background(), "IN")
		c, err := st.OrderedConsumer(context.Background(), jetstream.OrderedConsumerConfig{})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		count := 0
		start := time.Now()
		cc, err := c.Consume(func(m jetstream.Msg) {
			if _, err := m.Metadata(); err == nil {
				if count++; count == n {
					close(done)
				}
			}
		}, jetstream.PullMaxMessages(pullBatch))
		if err != nil {
			b.Fatal(err)
		}
		<-done
		d := time.Since(start)
		cc.Stop()
		return d
	}
	ours := func() time.Duration {
		s := &Source{Conn: ts.conn(), Stream: "IN", Bounded: true}
		start := time.Now()
		r, err := s.Open(context.Background(), 0, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		count := 0
		for {
			err := r.Read(context.Background(), 1024, func(any) { count++ })
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if count != n {
			b.Fatalf("read %d, want %d", count, n)
		}
		return time.Since(start)
	}
	measure(b, n, raw, ours, "source")
}

// measure times the raw way and the connector (name) b.N times each, n messages a time,
// and reports both rates and their ratio.
func measure(b *testing.B, n int, raw, ours func() time.Duration, name string) {
	b.ResetTimer()
	var tr, to time.Duration
	for i := 0; i < b.N; i++ {
		tr += raw()
		to += ours()
	}
	b.ReportMetric(float64(n*b.N)/tr.Seconds(), "raw-msgs/s")
	b.ReportMetric(float64(n*b.N)/to.Seconds(), name+"-msgs/s")
	b.ReportMetric(tr.Seconds()/to.Seconds(), "ratio")
}

// BenchmarkSinkAgainstAsyncPublish writes the same 32-byte records with a bare async
// publish (the raw limit, at-least-once) and through a Sink writer's commit (exactly
// once), and reports the ratio of their rates (the target: at least 0.5).
func BenchmarkSinkAgainstAsyncPublish(b *testing.B) {
	const n = 100_000
	ts := startServer(b)
	ts.stream(b, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>", DefaultMarkerPrefix + ".>"}, AllowAtomicPublish: true})
	payload := "0123456789abcdef0123456789abcdef"
	raw := func() time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			if _, err := ts.js.PublishAsync("out.raw", []byte(payload)); err != nil {
				b.Fatal(err)
			}
		}
		<-ts.js.PublishAsyncComplete()
		return time.Since(start)
	}
	s := &Sink{Conn: ts.conn(), Stream: "OUT", Subject: "out.sink", Job: "bench"}
	w, err := s.Open(context.Background(), 0, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	id := int64(0)
	ours := func() time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			if err := w.Write(payload); err != nil {
				b.Fatal(err)
			}
		}
		id++
		if _, err := w.PreCommit(id); err != nil {
			b.Fatal(err)
		}
		if err := commit(w, id); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	measure(b, n, raw, ours, "sink")
}

// BenchmarkRepartitionSmallRecords writes 8-byte words through one upstream task's
// repartition writer (a checkpoint every 100000 words) to 4 partitions, and reads them
// back with the 4 partitions' readers at once; it reports the words per second of the
// writer, of the readers and through both, beside the data messages (frames) per second
// the writer published and the words a frame holds. With one word a frame, the rate is
// JetStream's message rate; packed, the frames carry many words each.
func BenchmarkRepartitionSmallRecords(b *testing.B) {
	for _, c := range []struct {
		name       string
		words      int
		frameBytes int
	}{{"frame=64KiB", 1_000_000, 0}, {"frame=1word", 50_000, 16}} {
		b.Run(c.name, func(b *testing.B) {
			ts := startServer(b)
			if err := EnsureRepartitionStream(context.Background(), ts.conn(), "BENCH", 1); err != nil {
				b.Fatal(err)
			}
			var tw, tr time.Duration
			frames := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := &Repartition{Conn: ts.conn(), Stream: "BENCH", Job: "bench", Exchange: i + 1, Partitions: 4, MaxParallelism: 128, FrameBytes: c.frameBytes,
					Key:    func(rec any) []byte { return binary.BigEndian.AppendUint64(nil, rec.(uint64)) },
					Encode: func(b []byte, rec any) ([]byte, error) { return binary.BigEndian.AppendUint64(b, rec.(uint64)), nil },
					Decode: func(b []byte) (any, error) { return binary.BigEndian.Uint64(b), nil }}
				tw += benchWrite(b, r, c.words)
				n, d := benchRead(b, r)
				tr += d
				if n != c.words {
					b.Fatalf("read %d words, wrote %d", n, c.words)
				}
				frames += benchFrames(b, ts, r)
			}
			n := float64(c.words * b.N)
			b.ReportMetric(n/(tw+tr).Seconds(), "words/s")
			b.ReportMetric(n/tw.Seconds(), "sink-words/s")
			b.ReportMetric(n/tr.Seconds(), "source-words/s")
			b.ReportMetric(float64(frames)/tw.Seconds(), "sink-msgs/s")
			b.ReportMetric(n/float64(frames), "words/msg")
		})
	}
}

// benchWrite writes words 0 to n-1 through upstream task 0 of r, commits and ends its
// input, and returns how long it took.
func benchWrite(b *testing.B, r *Repartition, n int) time.Duration {
	start := time.Now()
	w, err := r.Sink(0).Open(context.Background(), 0, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	id := int64(0)
	for i := 0; i < n; i++ {
		if err := w.Write(uint64(i)); err != nil {
			b.Fatal(err)
		}
		if (i+1)%100_000 == 0 || i == n-1 {
			id++
			if _, err := w.PreCommit(id); err != nil {
				b.Fatal(err)
			}
			if err := w.Commit(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.(dataflow.Flusher).Flush(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// benchRead reads r's partitions at once to their end, and returns the words read and how
// long it took.
func benchRead(b *testing.B, r *Repartition) (int, time.Duration) {
	start := time.Now()
	counts := make([]int, r.Partitions)
	errs := make(chan error, r.Partitions)
	for p := range r.Partitions {
		go func() {
			rd, err := r.Source(p, 1).Open(context.Background(), 0, 1, nil)
			if err != nil {
				errs <- err
				return
			}
			defer rd.Close()
			for {
				err := rd.Read(context.Background(), 1024, func(any) { counts[p]++ })
				if err != nil {
					if err == io.EOF {
						err = nil
					}
					errs <- err
					return
				}
			}
		}()
	}
	for range r.Partitions {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	total := 0
	for _, c := range counts {
		total += c
	}
	return total, d
}

// benchFrames counts the data messages of r's exchange in the stream.
func benchFrames(b *testing.B, ts *testServer, r *Repartition) int {
	st, err := ts.js.Stream(context.Background(), r.Stream)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for p := range r.Partitions {
		info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(r.Subject(p)))
		if err != nil {
			b.Fatal(err)
		}
		n += int(info.State.Subjects[r.Subject(p)]) - 1 // less the end frame
	}
	return n
}

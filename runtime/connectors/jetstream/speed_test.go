package jetstream

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

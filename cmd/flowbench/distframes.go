package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
)

// The raw cost of the repartition stream's bytes: nats.go alone publishes messages the size
// of a full frame (natsjs.DefaultFrameBytes) on a stream of their own and reads them back
// with an ordered consumer, as the exchanges write frames and read them back, so that the
// model in docs/architecture.md has nats-server's CPU per byte of large messages beside
// the JetStream phase's per message of small ones.

const (
	distFrameStream = "dist-frames"
	distFrameSize   = natsjs.DefaultFrameBytes
)

// frameRuns are the rounds of the raw frames.
type frameRuns struct {
	publish, consume []float64 // MB/s
	serverCPU        []float64 // nats-server CPU us per kB (10^3 bytes) published and read back
	clientCPU        []float64 // the benchmark's (nats.go) CPU us per kB, both ways
}

// rawFrames publishes total bytes in messages of distFrameSize random bytes (async,
// nats.go's default window) on a stream created afresh, reads them back with an ordered
// consumer, checks count and bytes, deletes the stream and records the rates and CPU.
func rawFrames(ctx context.Context, srv *natsServer, total int64, runs *frameRuns) error {
	nc, err := nats.Connect(srv.url)
	if err != nil {
		return fmt.Errorf("raw frames: connect to %s: %w", srv.url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("raw frames: %w", err)
	}
	if err := recreateStream(ctx, js, jetstream.StreamConfig{Name: distFrameStream, Subjects: []string{"frames.>"}, Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	defer js.DeleteStream(context.WithoutCancel(ctx), distFrameStream)
	frame := make([]byte, distFrameSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range frame {
		frame[i] = byte(rng.Uint32())
	}
	n := max(1, total/distFrameSize)
	subjects := partitionSubjects("frames", 3)
	stall := []jetstream.PublishOpt{jetstream.WithStallWait(30 * time.Second)}
	m := startMeter(srv.pid)
	for i := range n {
		if _, err := js.PublishAsync(subjects[i%3], frame, stall...); err != nil {
			return fmt.Errorf("raw frames: publish frame %d: %w", i+1, err)
		}
	}
	if err := waitAcks(ctx, js); err != nil {
		return fmt.Errorf("raw frames: %w", err)
	}
	pd, pb, ps := m.stop()
	// An async publish that failed calls no handler here: count what the stream holds.
	if stored, err := subjectCount(ctx, js, distFrameStream, "frames.>"); err != nil || stored != n {
		return fmt.Errorf("raw frames: stream %s holds %d of the %d frames published (%v)", distFrameStream, stored, n, err)
	}
	m = startMeter(srv.pid)
	got, size, err := consumeAll(ctx, js, distFrameStream, n, nil)
	if err != nil {
		return fmt.Errorf("raw frames: %w", err)
	}
	cd, cb, cs := m.stop()
	if bytes := n * distFrameSize; got != n || size != bytes {
		return fmt.Errorf("raw frames: read %d messages of %d bytes back, published %d of %d bytes", got, size, n, bytes)
	}
	kB := float64(n*distFrameSize) / 1e3
	runs.publish = append(runs.publish, kB/1e3/pd.Seconds())
	runs.consume = append(runs.consume, kB/1e3/cd.Seconds())
	runs.serverCPU = append(runs.serverCPU, float64((ps+cs).Nanoseconds())/1e3/kB)
	runs.clientCPU = append(runs.clientCPU, float64((pb+cb).Nanoseconds())/1e3/kB)
	return nil
}

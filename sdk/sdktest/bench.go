package sdktest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// DiscardStreams is an sdk.CheckpointStreamFactory that drops what is written and only
// counts the bytes, so that benchmarks of Snapshot.Write measure the backend alone. Its
// handles cannot be restored. It is safe for concurrent use.
type DiscardStreams struct{ n atomic.Int64 }

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (d *DiscardStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &discardStream{d: d, scope: scope}, nil
}

// Bytes returns the number of bytes of the streams turned into handles so far.
func (d *DiscardStreams) Bytes() int64 { return d.n.Load() }

// discardStream is one stream of DiscardStreams.
type discardStream struct {
	d     *DiscardStreams
	scope sdk.Scope
	n     int64
}

// Write implements io.Writer.
func (s *discardStream) Write(p []byte) (int, error) { s.n += int64(len(p)); return len(p), nil }

// Close implements sdk.CheckpointStateOutputStream.
func (s *discardStream) Close() error { return nil }

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream.
func (s *discardStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.d.n.Add(s.n)
	return sdk.StreamStateHandle{Ref: "discard", Size: s.n, Scope: s.scope}, nil
}

// UserKey returns key i of a benchmark state spread over 128 key groups: key group i%128,
// then "user-" and i in nine digits.
func UserKey(i int) []byte { return StateKey(i%defaultMaxParallelism, fmt.Sprintf("user-%09d", i)) }

// WriteUserKeys writes UserKey(i) for i in [0, n) to kb, each with a value of vsize zero
// bytes, in batches of 4096; it fails t on an error.
func WriteUserKeys(t testing.TB, kb sdk.KeyedStateBackend, n, vsize int) {
	t.Helper()
	val := make([]byte, vsize)
	muts := make([]sdk.Mutation, 0, 4096)
	for i := range n {
		muts = append(muts, sdk.Mutation{Key: UserKey(i), Value: val})
		if len(muts) == cap(muts) || i == n-1 {
			MustWrite(t, kb, nil, muts)
			muts = muts[:0]
		}
	}
}

// benchState opens a keyed backend of sb owning all key groups, closed when b ends, and
// writes n user keys with vsize-byte values to it.
func benchState(b *testing.B, sb sdk.StateBackend, n, vsize int) sdk.KeyedStateBackend {
	b.Helper()
	kb := OpenKeyed(b, sb, fullParams("bench"))
	WriteUserKeys(b, kb, n, vsize)
	return kb
}

// benchStateKeys is the number of keys the Get and Write benchmarks run against.
const benchStateKeys = 200000

// BenchStateBackend runs the kit's benchmarks against plugins made by factory, each a
// sub-benchmark with a fresh plugin: Get/256 and Get/4096 (batched Get of random keys of a
// 200,000-key state with 100-byte values; keys/s), Write/256 and Write/4096 (batched Write
// of 100-byte values to random keys of such a state; keys/s) and SnapshotWrite (Snapshot
// and its asynchronous Write to DiscardStreams of about 100 MB of state; MB/s).
func BenchStateBackend(b *testing.B, factory func(b *testing.B) sdk.StateBackend) {
	b.Run("Get", func(b *testing.B) { benchGet(b, factory(b)) })
	b.Run("Write", func(b *testing.B) { benchWrite(b, factory(b)) })
	b.Run("SnapshotWrite", func(b *testing.B) { benchSnapshotWrite(b, factory(b)) })
}

// benchGet measures batched Get of random keys of a 200,000-key state of sb (100-byte
// values), in sub-benchmarks of 256 and 4096 keys a call; it reports keys/s.
func benchGet(b *testing.B, sb sdk.StateBackend) {
	kb := benchState(b, sb, benchStateKeys, 100)
	for _, batch := range []int{256, 4096} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			keys := make([][]byte, batch)
			for i := range keys {
				keys[i] = UserKey(rand.IntN(benchStateKeys))
			}
			for b.Loop() {
				if _, err := kb.Get(context.Background(), keys); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// benchWrite measures batched Write of 100-byte values to random keys of a 200,000-key
// state of sb, in sub-benchmarks of 256 and 4096 mutations a call; it reports keys/s.
func benchWrite(b *testing.B, sb sdk.StateBackend) {
	kb := benchState(b, sb, benchStateKeys, 100)
	val := make([]byte, 100)
	for _, batch := range []int{256, 4096} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			muts := make([]sdk.Mutation, batch)
			for i := range muts {
				muts[i] = sdk.Mutation{Key: UserKey(rand.IntN(benchStateKeys)), Value: val}
			}
			for b.Loop() {
				if err := kb.Write(context.Background(), muts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// benchSnapshotWrite measures Snapshot and its asynchronous Write to DiscardStreams of
// about 100 MB of state of sb (800,000 keys of 100-byte values plus keys and framing); it
// sets the bytes a snapshot writes, so that the benchmark reports MB/s.
func benchSnapshotWrite(b *testing.B, sb sdk.StateBackend) {
	kb := benchState(b, sb, 800000, 100)
	var size int64
	for b.Loop() {
		s, err := kb.Snapshot(context.Background(), sdk.SnapshotOptions{CheckpointID: 1})
		if err != nil {
			b.Fatal(err)
		}
		d := &DiscardStreams{}
		_, err = s.Write(context.Background(), d)
		s.Release()
		if err != nil {
			b.Fatal(err)
		}
		size = d.Bytes()
	}
	b.SetBytes(size)
}

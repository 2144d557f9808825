package leveldb

// The benchmarks in this file are common to the built-in state backends (plugins/hashmap
// and plugins/leveldb keep identical copies); testPlugin in each package supplies the
// backend.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// discardStreams is a stream factory that only counts bytes.
type discardStreams struct{ n int64 }

func (d *discardStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &discardStream{d: d}, nil
}

type discardStream struct {
	d *discardStreams
	n int64
}

func (s *discardStream) Write(p []byte) (int, error) { s.n += int64(len(p)); return len(p), nil }
func (s *discardStream) Close() error                { return nil }
func (s *discardStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.d.n += s.n
	return sdk.StreamStateHandle{Ref: "discard", Size: s.n}, nil
}

// benchKey is key i of a benchmark state spread over 128 key groups.
func benchKey(i int) []byte { return key(i%128, fmt.Sprintf("user-%09d", i)) }

// benchState fills a keyed backend with n keys of vsize-byte values.
func benchState(b *testing.B, n, vsize int) sdk.KeyedStateBackend {
	b.Helper()
	kb := openKeyed(b, testPlugin(b, nil), params("bench", 0, 1))
	val := make([]byte, vsize)
	muts := make([]sdk.Mutation, 0, 4096)
	for i := range n {
		muts = append(muts, sdk.Mutation{Key: benchKey(i), Value: val})
		if len(muts) == cap(muts) || i == n-1 {
			mustWrite(b, kb, nil, muts)
			muts = muts[:0]
		}
	}
	return kb
}

func BenchmarkGet(b *testing.B) {
	const n = 200000
	kb := benchState(b, n, 100)
	for _, batch := range []int{256, 4096} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			keys := make([][]byte, batch)
			for i := range keys {
				keys[i] = benchKey(rand.IntN(n))
			}
			for b.Loop() {
				if _, err := kb.Get(bg, keys); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	const n = 200000
	kb := benchState(b, n, 100)
	val := make([]byte, 100)
	for _, batch := range []int{256, 4096} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			muts := make([]sdk.Mutation, batch)
			for i := range muts {
				muts[i] = sdk.Mutation{Key: benchKey(rand.IntN(n)), Value: val}
			}
			for b.Loop() {
				if err := kb.Write(bg, muts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// BenchmarkSnapshotWrite measures the asynchronous part of a full snapshot of ~100 MB of
// state (800,000 keys of 100-byte values plus keys and framing).
func BenchmarkSnapshotWrite(b *testing.B) {
	kb := benchState(b, 800000, 100)
	var size int64
	for b.Loop() {
		s, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 1})
		if err != nil {
			b.Fatal(err)
		}
		d := &discardStreams{}
		if _, err := s.Write(bg, d); err != nil {
			b.Fatal(err)
		}
		s.Release()
		size = d.n
	}
	b.SetBytes(size)
}

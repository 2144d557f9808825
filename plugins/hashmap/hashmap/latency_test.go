package hashmap

import (
	"slices"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// BenchmarkSnapshotSync measures the synchronous Snapshot with 1M keys (~130 MB of state)
// while a previous snapshot's Write and ongoing writes run, and the first write batch after
// it (which pays the copy-on-write clones of the shards it touches).
func BenchmarkSnapshotSync(b *testing.B) {
	kb := sdktest.OpenKeyed(b, testPlugin(b, nil), sdktest.Params("bench", 0, 1))
	sdktest.WriteUserKeys(b, kb, 1000000, 100)
	val := make([]byte, 100)
	muts := make([]sdk.Mutation, 1024)
	var syncs, writes []time.Duration
	id := int64(0)
	for b.Loop() {
		id++
		start := time.Now()
		s, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: id})
		syncs = append(syncs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			defer s.Release()
			_, err := s.Write(bg, &sdktest.DiscardStreams{})
			done <- err
		}()
		for i := range muts {
			muts[i] = sdk.Mutation{Key: sdktest.UserKey((int(id)*7919 + i*977) % 1000000), Value: val}
		}
		start = time.Now()
		if err := kb.Write(bg, muts); err != nil {
			b.Fatal(err)
		}
		writes = append(writes, time.Since(start))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(syncs)
	slices.Sort(writes)
	p := func(d []time.Duration, q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) }
	b.ReportMetric(p(syncs, 0.5), "sync-p50-us")
	b.ReportMetric(p(syncs, 0.99), "sync-p99-us")
	b.ReportMetric(p(writes, 0.5), "first-write-1024-p50-us")
	b.ReportMetric(p(writes, 0.99), "first-write-1024-p99-us")
}

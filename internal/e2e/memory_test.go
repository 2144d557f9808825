package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/procmem"
	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// The leveldb plugin's memory bound (docs/configuration.md, leveldb's memory-limit;
// docs/performance.md, "Memory"): its process's peak resident memory stays within its
// memory limit, 64 MiB + (block-cache-size + 4 x write-buffer-size) per open keyed backend,
// plus leveldbRSSOverhead, whatever the number of keys.
const (
	leveldbDefaultLimit = 64<<20 + 2*(16<<20+4*16<<20) // two keyed backends at the defaults
	leveldbRSSOverhead  = 128 << 20
	// leveldbRSSFlat bounds how much more the peak may be with twice the keys.
	leveldbRSSFlat = 64 << 20
)

// leveldbPeak starts the leveldb plugin binary, writes keys distinct keys (8-byte values)
// through the plugin protocol into two keyed backends at the defaults (the subtasks of a
// job of parallelism 2, each owning half the key groups), in turn, in writes of about
// 1 MiB as the runner's store sends them, with a full checkpoint snapshot of both written
// after every 500,000 keys and at the end, and returns the process's peak resident memory.
func leveldbPeak(t *testing.T, keys int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := host.Start(ctx, host.Config{Path: testbin.Plugin(t, "leveldb")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	w := procmem.Watch(p.Pid(), 20*time.Millisecond)
	if err := p.Configure(ctx, sdk.Options{"localdir": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	sb, ok := p.StateBackend()
	if !ok {
		t.Fatal("the leveldb plugin serves no state backend")
	}
	var kbs [2]sdk.KeyedStateBackend
	var muts [2][]sdk.Mutation
	for s := range kbs {
		if kbs[s], err = sb.CreateKeyedStateBackend(ctx, sdktest.Params("memory", s, 2)); err != nil {
			t.Fatal(err)
		}
		defer kbs[s].Close() // before the plugin is killed
		muts[s] = make([]sdk.Mutation, 0, 32<<10)
	}
	val := make([]byte, 8)
	var id int64
	written := [2]int64{} // keys each backend holds
	next := 500_000       // keys written at the next snapshot
	for i := range keys {
		k := memoryKey(i)
		s := 0
		if !sdktest.Params("memory", 0, 2).KeyGroups.Contains(sdk.KeyGroupOf(k)) {
			s = 1
		}
		muts[s] = append(muts[s], sdk.Mutation{Key: k, Value: val})
		last := i == keys-1
		for s := range kbs {
			if len(muts[s]) < cap(muts[s]) && !(last && len(muts[s]) > 0) {
				continue
			}
			if err := kbs[s].Write(ctx, muts[s]); err != nil {
				t.Fatalf("write at key %d: %v", i, err)
			}
			written[s] += int64(len(muts[s]))
			muts[s] = muts[s][:0]
		}
		if i+1 < next && !last {
			continue
		}
		next += 500_000
		id++
		for s, kb := range kbs {
			snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: id})
			if err != nil {
				t.Fatalf("snapshot %d: %v", id, err)
			}
			streams := &sdktest.DiscardStreams{}
			if _, err := snap.Write(ctx, streams); err != nil {
				t.Fatalf("snapshot %d: %v", id, err)
			}
			snap.Release()
			if want := written[s] * int64(len(k)+len(val)); streams.Bytes() < want {
				t.Fatalf("snapshot %d of subtask %d holding %d keys wrote %d bytes, want at least %d", id, s, written[s], streams.Bytes(), want)
			}
		}
	}
	peaks := w.Stop()
	if len(peaks) != 1 || peaks[0].PID != p.Pid() {
		t.Fatalf("peaks %+v: want the plugin process %d alone", peaks, p.Pid())
	}
	return peaks[0].Bytes
}

// memoryKey returns distinct key i of leveldbPeak: a job's keys arrive in no order, so
// its compactions merge tables, as they do in a job. Multiplying by an odd constant
// permutes the uint64s.
func memoryKey(i int) []byte {
	x := uint64(i) * 0x9E3779B97F4A7C15
	return sdktest.StateKey(int(x%128), "k"+strconv.FormatUint(x, 36))
}

// TestLevelDBMemoryIsBoundedByConfiguration writes 2M and then 4M distinct keys into a
// fresh leveldb plugin process each: both peaks stay within the plugin's memory limit at
// the defaults (224 MiB for two keyed backends) plus 128 MiB, and twice the keys add less
// than 64 MiB.
func TestLevelDBMemoryIsBoundedByConfiguration(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // the plugin inherits the environment: its own limit applies
	mib := func(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
	small := leveldbPeak(t, 2_000_000)
	large := leveldbPeak(t, 4_000_000)
	t.Logf("leveldb plugin peak RSS: %s with 2M keys, %s with 4M keys (limit %s)", mib(small), mib(large), mib(leveldbDefaultLimit))
	for _, c := range []struct {
		keys string
		peak int64
	}{{"2M", small}, {"4M", large}} {
		if c.peak > leveldbDefaultLimit+leveldbRSSOverhead {
			t.Errorf("peak RSS with %s keys %s: over the memory limit %s + %s", c.keys, mib(c.peak), mib(leveldbDefaultLimit), mib(leveldbRSSOverhead))
		}
	}
	if large-small > leveldbRSSFlat {
		t.Errorf("peak RSS grew by %s from 2M to 4M keys, want under %s", mib(large-small), mib(leveldbRSSFlat))
	}
}

package state

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// mapBackend is the smallest keyed backend: enough to test the store's batching.
type mapBackend struct {
	sdk.KeyedStateBackend
	m            map[string][]byte
	gets, writes int
}

func (b *mapBackend) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	b.gets++
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = b.m[string(k)]
	}
	return out, nil
}

func (b *mapBackend) Write(_ context.Context, muts []sdk.Mutation) error {
	b.writes++
	for _, m := range muts {
		if m.Delete {
			delete(b.m, string(m.Key))
		} else {
			b.m[string(m.Key)] = append([]byte{}, m.Value...)
		}
	}
	return nil
}

func TestStoreBatchesAndKeepsSameKeyOrder(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	count := NewValue("count", Int64)
	seen := NewList("seen", String)
	s, err := NewStore(b, 128, []Descriptor{count, seen})
	if err != nil {
		t.Fatal(err)
	}
	s.SetCacheEntries(0) // every batch reads its keys
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("a"), []byte("c")}
	var got []string
	for round := 0; round < 2; round++ {
		err := s.ProcessBatch(context.Background(), keys, nil, func(i int) error {
			n, _, err := count.Get(s)
			if err != nil {
				return err
			}
			n++
			got = append(got, fmt.Sprintf("%s%d", keys[i], n))
			if err := seen.Add(s, fmt.Sprint(i)); err != nil {
				return err
			}
			return count.Update(s, n)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := "[a1 b1 a2 a3 c1 a4 b2 a5 a6 c2]"
	if fmt.Sprint(got) != want {
		t.Fatalf("counts %v, want %v", got, want)
	}
	s.Sync()
	if b.gets != 2 || b.writes != 2 {
		t.Fatalf("%d gets and %d writes for 2 batches, want 2 and 2", b.gets, b.writes)
	}
	st := s.Stats()
	if st.Records != 10 || st.KeysRead != 12 || st.KeysWritten != 12 {
		t.Fatalf("stats %+v", st)
	}
	// The list kept per-key order across batches.
	s.ProcessBatch(context.Background(), [][]byte{[]byte("a")}, nil, func(int) error {
		l, err := seen.Get(s)
		if fmt.Sprint(l) != "[0 2 3 0 2 3]" {
			t.Fatalf("list of a = %v (%v)", l, err)
		}
		return err
	})
}

func TestStoreEmptyValueIsNotAbsent(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	v := NewValue("v", String)
	s, _ := NewStore(b, 8, []Descriptor{v})
	k := [][]byte{[]byte("k")}
	s.ProcessBatch(context.Background(), k, nil, func(int) error { return v.Update(s, "") })
	s.ProcessBatch(context.Background(), k, nil, func(int) error {
		x, ok, err := v.Get(s)
		if !ok || x != "" || err != nil {
			t.Fatalf("empty string state read back as (%q, %v, %v)", x, ok, err)
		}
		return v.Clear(s)
	})
	s.Sync()
	if len(b.m) != 0 {
		t.Fatalf("clear left %d entries", len(b.m))
	}
}

func TestMapAndReducingState(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	m := NewMap("m", String, Int64)
	r := NewReducing("r", Int64, func(a, b int64) int64 { return max(a, b) })
	s, _ := NewStore(b, 8, []Descriptor{m, r})
	k := [][]byte{[]byte("k")}
	s.ProcessBatch(context.Background(), k, nil, func(int) error {
		m.Put(s, "x", 1)
		m.Put(s, "y", 2)
		m.Remove(s, "x")
		r.Add(s, 5)
		r.Add(s, 3)
		return nil
	})
	s.ProcessBatch(context.Background(), k, nil, func(int) error {
		all, _ := m.Entries(s)
		top, _, _ := r.Get(s)
		if fmt.Sprint(all) != "map[y:2]" || top != 5 {
			t.Fatalf("map %v, reducing %d", all, top)
		}
		return nil
	})
}

// TestStoreWriteCompletesBeforeTheNextRead: a batch's write goes on in the background, but
// a later read of a key not in the cache waits for it.
func TestStoreWriteCompletesBeforeTheNextRead(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	v := NewValue("v", Int64)
	s, _ := NewStore(b, 8, []Descriptor{v})
	s.SetCacheEntries(0)
	for i := int64(1); i <= 50; i++ {
		err := s.ProcessBatch(context.Background(), [][]byte{[]byte("k")}, nil, func(int) error {
			n, _, err := v.Get(s)
			if err == nil && n != i-1 {
				t.Fatalf("batch %d read %d: the previous write was not applied first", i, n)
			}
			return v.Update(s, i)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreCacheServesLaterBatchesAndStaysBounded(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	count := NewValue("count", Int64)
	s, _ := NewStore(b, 128, []Descriptor{count})
	s.SetCacheEntries(3)
	incr := func(keys ...string) {
		t.Helper()
		var ks [][]byte
		for _, k := range keys {
			ks = append(ks, []byte(k))
		}
		if err := s.ProcessBatch(context.Background(), ks, nil, func(int) error {
			n, _, err := count.Get(s)
			if err != nil {
				return err
			}
			return count.Update(s, n+1)
		}); err != nil {
			t.Fatal(err)
		}
	}
	incr("a", "b")
	incr("a", "b") // both cached: no read
	s.Sync()
	if b.gets != 1 || s.Stats().CacheHits != 2 {
		t.Fatalf("%d gets, %d cache hits; want 1 and 2", b.gets, s.Stats().CacheHits)
	}
	incr("c", "d") // over 3 entries: a new generation; a and b are in the old one
	incr("a")      // still cached, and back in the young generation
	incr("e", "f") // a new generation again: b, untouched, leaves the cache; a stays
	incr("b")      // not cached any more: read, and the backend has the right value
	incr("a")
	s.Sync()
	if b.gets != 4 || s.Stats().CacheHits != 4 {
		t.Fatalf("%d gets, %d cache hits; want 4 and 4", b.gets, s.Stats().CacheHits)
	}
	for k, want := range map[string]int64{"a": 4, "b": 3} {
		s.ProcessBatch(context.Background(), [][]byte{[]byte(k)}, nil, func(int) error {
			if n, _, _ := count.Get(s); n != want {
				t.Fatalf("count of %s = %d, want %d", k, n, want)
			}
			return nil
		})
	}
	if len(s.vc.young) > 3 || len(s.vc.old) > 3 {
		t.Fatalf("cache generations hold %d and %d entries, bound is 3", len(s.vc.young), len(s.vc.old))
	}
}

// slowBackend records the order writes arrive in, takes its time over each, and fails the
// write numbered failAt (1-based; 0: never).
type slowBackend struct {
	sdk.KeyedStateBackend
	mu       sync.Mutex
	inFlight int
	maxSeen  int
	order    []string // the value of key "k" each write carried, up to its '|' (see bigValue)
	failAt   int
	gate     chan struct{} // if set, every write waits for it to close
}

func (b *slowBackend) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	return make([][]byte, len(keys)), nil
}

func (b *slowBackend) Write(_ context.Context, muts []sdk.Mutation) error {
	if b.gate != nil {
		<-b.gate
	}
	b.mu.Lock()
	b.inFlight++
	b.maxSeen = max(b.maxSeen, b.inFlight)
	n := len(b.order) + 1
	b.order = append(b.order, strings.SplitN(string(muts[0].Value), "|", 2)[0])
	b.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // the write takes its time, as a disk's does: simulated, not a wait
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
	if n == b.failAt {
		return errors.New("disk on fire")
	}
	return nil
}

// bigValue is a value of WriteBytes bytes starting with i and '|': a batch writing it
// starts its write at once instead of gathering more batches.
func bigValue(i int) []byte {
	v := []byte(fmt.Sprintf("%d|", i))
	return append(v, make([]byte, WriteBytes-len(v))...)
}

// TestStoreWritesInFlightApplyInOrder: several batches' writes run behind the subtask, one
// at a time and in batch order, and Sync waits for all of them.
func TestStoreWritesInFlightApplyInOrder(t *testing.T) {
	b := &slowBackend{}
	s, _ := NewStore(b, 8, []Descriptor{NewValue("v", Int64)})
	s.SetCacheEntries(1 << 10) // every batch after the first is served from the cache
	const batches = 20
	for i := 0; i < batches; i++ {
		err := s.ProcessBatch(context.Background(), [][]byte{[]byte("k")}, nil, func(int) error {
			return s.set("v", bigValue(i))
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.pending) > MaxWritesInFlight {
			t.Fatalf("%d writes in flight, want at most %d", len(s.pending), MaxWritesInFlight)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.order) != batches {
		t.Fatalf("%d writes reached the backend, want %d", len(b.order), batches)
	}
	for i, v := range b.order {
		if v != fmt.Sprint(i) {
			t.Fatalf("write %d carried %q, want %q: writes applied out of order (%v)", i, v, fmt.Sprint(i), b.order)
		}
	}
	if b.maxSeen != 1 {
		t.Fatalf("%d writes reached the backend at once, want one at a time", b.maxSeen)
	}
}

// TestStoreFailedWriteStopsLaterWrites: when a write in flight fails, the writes queued
// behind it never reach the backend, and the error comes back from Sync.
func TestStoreFailedWriteStopsLaterWrites(t *testing.T) {
	b := &slowBackend{failAt: 2}
	s, _ := NewStore(b, 8, []Descriptor{NewValue("v", Int64)})
	s.SetCacheEntries(1 << 10)
	var err error
	for i := 0; i < 3 && err == nil; i++ {
		err = s.ProcessBatch(context.Background(), [][]byte{[]byte("k")}, nil, func(int) error {
			return s.set("v", bigValue(i))
		})
	}
	if err == nil {
		err = s.Sync()
	}
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the failed write's error", err)
	}
	if len(s.pending) != 0 {
		t.Fatalf("%d writes still pending after the error", len(s.pending))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.order) != 2 {
		t.Fatalf("%d writes reached the backend, want 2 (none after the failed one)", len(b.order))
	}
}

// lockedBackend is a mapBackend safe for the store's write and read goroutines, whose
// writes take their time, so that reads run while writes are in flight.
type lockedBackend struct {
	mu sync.Mutex
	mapBackend
	delay time.Duration
}

func (b *lockedBackend) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mapBackend.Get(ctx, keys)
}

func (b *lockedBackend) Write(ctx context.Context, muts []sdk.Mutation) error {
	time.Sleep(b.delay) // the write takes its time, as a disk's does: simulated, not a wait
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mapBackend.Write(ctx, muts)
}

// countingStore returns a store over a locked map backend whose writes take delay, for an
// operator declaring the one state countKeys counts in, "n".
func countingStore(t *testing.T, delay time.Duration) (*lockedBackend, *Value[int64], *Store) {
	t.Helper()
	b := &lockedBackend{mapBackend: mapBackend{m: map[string][]byte{}}, delay: delay}
	n := NewValue("n", Int64)
	s, err := NewStore(b, 8, []Descriptor{n})
	if err != nil {
		t.Fatal(err)
	}
	return b, n, s
}

// countKeys runs batches of keys through s, counting each key's records in state "n",
// prefetching each batch ahead of the one before it as a keyed subtask does, and returns
// the counts expected.
func countKeys(t *testing.T, s *Store, n *Value[int64], batches [][][]byte) map[string]int64 {
	t.Helper()
	want := map[string]int64{}
	ctx := context.Background()
	for i, keys := range batches {
		if i+1 < len(batches) {
			s.Prefetch(ctx, batches[i+1], nil)
		}
		err := s.ProcessBatch(ctx, keys, nil, func(j int) error {
			c, _, err := n.Get(s)
			if err != nil {
				return err
			}
			want[string(keys[j])]++
			return n.Update(s, c+1)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestStoreReadsNeverSeeWritesInFlight: reads go ahead of the writes in flight, so the
// store must never read a key one of them touches, even when its small cache starts over
// again and again while writes are slow. A stale read would lose counts.
func TestStoreReadsNeverSeeWritesInFlight(t *testing.T) {
	b, n, s := countingStore(t, time.Millisecond)
	s.SetCacheEntries(4)
	var batches [][][]byte
	for i := 0; i < 300; i++ {
		var keys [][]byte
		for j := 0; j < 3; j++ {
			keys = append(keys, []byte(fmt.Sprint("k", (i*7+j*3)%11)))
		}
		batches = append(batches, keys)
	}
	want := countKeys(t, s, n, batches)
	for k, c := range want {
		sk := stateKey(nil, KeyGroupFor([]byte(k), 8), "n", []byte(k))
		got, err := Int64.Decode(b.m[string(sk)])
		if err != nil || got != c {
			t.Fatalf("key %s: count %d (%v), want %d", k, got, err, c)
		}
	}
	if s.Stats().GetCalls == 0 {
		t.Fatal("no reads: the test did not exercise reads next to writes in flight")
	}
}

// TestStorePrefetchReadsEachKeyOnce: a prefetched batch's keys are read ahead, once, and a
// key of an earlier batch is not read again for a later one.
func TestStorePrefetchReadsEachKeyOnce(t *testing.T) {
	b, n, s := countingStore(t, 0)
	batches := [][][]byte{
		{[]byte("a")},
		{[]byte("a"), []byte("b")},
		{[]byte("b"), []byte("c"), []byte("a")},
	}
	s.Prefetch(context.Background(), batches[0], nil)
	want := countKeys(t, s, n, batches)
	if want["a"] != 3 || want["b"] != 2 || want["c"] != 1 {
		t.Fatalf("counted %v", want)
	}
	st := s.Stats()
	if st.KeysRead != 3 || st.GetCalls != 3 {
		t.Fatalf("%d reads of %d keys, want 3 reads of 3 keys (each key once)", st.GetCalls, st.KeysRead)
	}
	for _, k := range []string{"a", "b", "c"} {
		sk := stateKey(nil, KeyGroupFor([]byte(k), 8), "n", []byte(k))
		if got, _ := Int64.Decode(b.m[string(sk)]); got != want[k] {
			t.Fatalf("key %s: backend holds %d, want %d", k, got, want[k])
		}
	}
}

// TestStoreGathersSmallWrites: small batches' changes travel together, WriteBytes at a
// time, and Sync writes what is left.
func TestStoreGathersSmallWrites(t *testing.T) {
	b, n, s := countingStore(t, 0)
	var batches [][][]byte
	for i := 0; i < 100; i++ {
		batches = append(batches, [][]byte{[]byte(fmt.Sprint("key", i))})
	}
	countKeys(t, s, n, batches)
	if b.writes != 1 || s.Stats().WriteCalls != 1 {
		t.Fatalf("%d writes (store counted %d) for 100 small batches, want 1", b.writes, s.Stats().WriteCalls)
	}
	if len(b.m) != 100 {
		t.Fatalf("backend holds %d keys, want 100", len(b.m))
	}
}

// TestStoreGatheredWriteCarriesEachKeyOnce: batches gathered into one write that change
// the same keys leave one mutation per key in it, holding the newest value.
func TestStoreGatheredWriteCarriesEachKeyOnce(t *testing.T) {
	b, n, s := countingStore(t, 0)
	var batches [][][]byte
	for i := 0; i < 100; i++ {
		batches = append(batches, [][]byte{[]byte("hot"), []byte(fmt.Sprint("key", i)), []byte("hot"), []byte("warm")})
	}
	want := countKeys(t, s, n, batches)
	if b.writes != 1 {
		t.Fatalf("%d writes for 100 small batches, want 1", b.writes)
	}
	if got := s.Stats().KeysWritten; got != 102 {
		t.Errorf("the write carried %d keys, want 102 (hot, warm and 100 others once each)", got)
	}
	if len(b.m) != len(want) {
		t.Fatalf("backend holds %d keys, want %d", len(b.m), len(want))
	}
	// Each state key ends with its record key: match them by suffix.
	for k, c := range want {
		found := 0
		for bk, v := range b.m {
			if strings.HasSuffix(bk, k) {
				found++
				if got, _ := binary.Varint(v); got != c {
					t.Errorf("key %q: backend holds %d, want %d", k, got, c)
				}
			}
		}
		if found != 1 {
			t.Errorf("key %q: %d state keys end with it, want 1", k, found)
		}
	}
}

// TestStoreUndeclaredStateReadsAfterWrites: a state the operator did not declare is read on
// its own, after the writes in flight, so it sees the value the batch before wrote.
func TestStoreUndeclaredStateReadsAfterWrites(t *testing.T) {
	b := &lockedBackend{mapBackend: mapBackend{m: map[string][]byte{}}, delay: time.Millisecond}
	declared := NewValue("declared", Int64)
	other := NewValue("other", Int64)
	s, _ := NewStore(b, 8, []Descriptor{declared})
	for i := 0; i < 5; i++ {
		err := s.ProcessBatch(context.Background(), [][]byte{[]byte("k")}, nil, func(int) error {
			n, _, err := other.Get(s)
			if err != nil {
				return err
			}
			return other.Update(s, n+1)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	sk := stateKey(nil, KeyGroupFor([]byte("k"), 8), "other", []byte("k"))
	if got, _ := Int64.Decode(b.m[string(sk)]); got != 5 {
		t.Fatalf("undeclared state counted %d, want 5", got)
	}
	if st := s.Stats(); st.GetCalls < 5 {
		t.Fatalf("%d reads, want one per batch for the undeclared state", st.GetCalls)
	}
}

// A store over a backend it knows to be empty reads nothing until its cache lets a value
// go; from then on it reads what it does not hold, and every count stays right.
func TestStoreStartingEmptyReadsOnlyAfterTheCacheDropsValues(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	count := NewValue("count", Int64)
	s, _ := NewStore(b, 128, []Descriptor{count})
	s.SetCacheEntries(4)
	s.StartEmpty()
	want := map[string]int64{}
	incr := func(keys ...string) {
		t.Helper()
		var ks [][]byte
		for _, k := range keys {
			ks = append(ks, []byte(k))
		}
		s.Prefetch(context.Background(), ks, nil)
		if err := s.ProcessBatch(context.Background(), ks, nil, func(i int) error {
			n, _, err := count.Get(s)
			if err != nil {
				return err
			}
			if w := want[string(ks[i])]; n != w {
				return fmt.Errorf("count of %s = %d before the update, want %d", ks[i], n, w)
			}
			want[string(ks[i])] = n + 1
			return count.Update(s, n+1)
		}); err != nil {
			t.Fatal(err)
		}
	}
	incr("a", "b", "a")
	incr("c", "d")
	incr("e", "f", "a") // a new generation: a..d are the old one, nothing dropped yet
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b.gets != 0 || s.Stats().GetCalls != 0 {
		t.Fatalf("%d gets of an empty backend; want none", b.gets)
	}
	incr("g", "h", "i") // another generation: b, c, d leave the cache
	incr("b", "c", "j")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b.gets == 0 {
		t.Fatal("no read after the cache dropped values: b and c would have restarted at 0")
	}
	for k, n := range want {
		if got, _ := Int64.Decode(b.m[string(AppendStateKey(nil, KeyGroupFor([]byte(k), 128), "count", []byte(k)))]); got != n {
			t.Fatalf("backend holds %s = %d, want %d", k, got, n)
		}
	}
}

// TestStoreWriteInFlightKeepsItsValues: a value update reuses the memory of the key's
// value, so a write must carry copies. Each batch below updates the one key with a value
// large enough to start a write at once, while the writes before it still wait to be
// applied: each must still carry the value it was sent with.
func TestStoreWriteInFlightKeepsItsValues(t *testing.T) {
	b := &slowBackend{gate: make(chan struct{})}
	v := NewValue("v", Bytes)
	s, _ := NewStore(b, 8, []Descriptor{v})
	s.SetCacheEntries(1 << 10)
	const batches = 4 // fewer than MaxWritesInFlight: no batch waits for the gate
	for i := 0; i < batches; i++ {
		err := s.ProcessBatch(context.Background(), [][]byte{[]byte("k")}, nil, func(int) error {
			return v.Update(s, bigValue(i))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.pending) != batches {
		t.Fatalf("%d writes in flight, want %d", len(s.pending), batches)
	}
	close(b.gate)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, got := range b.order {
		if got != fmt.Sprint(i) {
			t.Fatalf("write %d carried the value of batch %s, want %d (all: %v)", i, got, i, b.order)
		}
	}
	if len(b.order) != batches {
		t.Fatalf("%d writes applied, want %d", len(b.order), batches)
	}
}

// TestStoreSmallValueUpdatesAllocateNothing: updating a cached counter writes into the
// memory its key's cache slot keeps, so a batch allocates nothing per record once its
// keys are cached and gathered into the write.
func TestStoreSmallValueUpdatesAllocateNothing(t *testing.T) {
	_, n, s := countingStore(t, 0)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint("key", i%10))
	}
	ctx := context.Background()
	fn := func(int) error {
		c, _, err := n.Get(s)
		if err != nil {
			return err
		}
		return n.Update(s, c+1)
	}
	if err := s.ProcessBatch(ctx, keys, nil, fn); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := s.ProcessBatch(ctx, keys, nil, fn); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations per batch of %d records, want at most 1", allocs, len(keys))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.ProcessBatch(ctx, keys[:1], nil, func(int) error {
		if c, _, _ := n.Get(s); c != 22*100 {
			t.Fatalf("count of key0 = %d, want %d", c, 22*100)
		}
		return nil
	})
}

// TestStoreFailedBatchEndsTheStore: a batch whose function fails may have changed values
// half way, so the store refuses later batches and writes nothing it gathered.
func TestStoreFailedBatchEndsTheStore(t *testing.T) {
	b, n, s := countingStore(t, 0)
	ctx := context.Background()
	keys := [][]byte{[]byte("a"), []byte("b")}
	boom := errors.New("boom")
	if err := s.ProcessBatch(ctx, keys, nil, func(i int) error {
		if i == 1 {
			return boom
		}
		return n.Update(s, 7)
	}); !errors.Is(err, boom) {
		t.Fatalf("ProcessBatch = %v, want the function's error", err)
	}
	if err := s.ProcessBatch(ctx, keys, nil, func(int) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("the next ProcessBatch = %v, want the earlier batch's error", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b.writes != 0 || len(b.m) != 0 {
		t.Fatalf("the backend got %d writes, %d keys, want none", b.writes, len(b.m))
	}
}

// cancelBackend refuses a write under a cancelled context, as a plugin's backend does.
type cancelBackend struct {
	mapBackend
	closed bool
}

func (b *cancelBackend) Write(ctx context.Context, muts []sdk.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.mapBackend.Write(ctx, muts)
}

func (b *cancelBackend) Close() error { b.closed = true; return nil }

// TestStoreCloseAfterCancelWritesNothing: the changes a subtask gathered after its last
// snapshot are not written when it closes once its context is cancelled (a job stopped
// with a savepoint); before, Close sent them under that context and reported the
// cancellation as an error the runner logged as a warning.
func TestStoreCloseAfterCancelWritesNothing(t *testing.T) {
	b := &cancelBackend{mapBackend: mapBackend{m: map[string][]byte{}}}
	v := NewValue("v", String)
	s, err := NewStore(b, 8, []Descriptor{v})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	if err := s.ProcessBatch(ctx, keys, nil, func(int) error { return v.Update(s, "x") }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := s.Close(); err != nil {
		t.Fatalf("Close after the subtask's context was cancelled = %v, want nil", err)
	}
	if b.writes != 0 || !b.closed {
		t.Fatalf("%d writes at close (want 0), backend closed: %v", b.writes, b.closed)
	}
}

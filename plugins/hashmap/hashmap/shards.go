package hashmap

import (
	"hash/maphash"
	"maps"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// targetShards is about how many shards a keyed backend's state is split into: the unit of
// copy-on-write, so that the first write to a shard after a snapshot clones 1/256 of the
// state at most.
const targetShards = 256

// table is one shard's map. A table referenced by a pending snapshot (refs > 0) is frozen:
// writers replace it with a clone instead of changing it.
type table struct {
	m    map[string][]byte
	refs int // pending snapshots holding the table; guarded by the shard's mutex
}

// shard is a part of a keyed backend's state.
type shard struct {
	mu sync.Mutex
	t  *table
	// seen is the snapshot epoch as of which every pending snapshot holds its view of this
	// shard; writes compare it with the backend's epoch to skip the snapshot bookkeeping.
	seen uint64
}

// layout maps keys to shards. Keys of one key group live in the same few shards, so that a
// scan within a key group (the common case) only looks at those. Keys sort by key group
// first, so the key groups of a range bound the shards holding its keys.
type layout struct {
	start    int // first key group of the backend's range
	groups   int // number of key groups in the range
	slots    int // min(groups, targetShards): key groups share a slot when there are more
	perGroup int // shards per slot, chosen by key hash when > 1
	n        int // number of shards
	seed     maphash.Seed
}

func newLayout(r sdk.KeyGroupRange) layout {
	g := r.End - r.Start
	slots := min(g, targetShards)
	per := max(1, (targetShards+g-1)/g)
	return layout{start: r.Start, groups: g, slots: slots, perGroup: per, n: slots * per, seed: maphash.MakeSeed()}
}

// paddedGroup is the key group of key read as if key were padded with zero bytes to the
// prefix length. It is monotonic in key order: a <= b implies paddedGroup(a) <= paddedGroup(b).
func paddedGroup(key []byte) int {
	switch len(key) {
	case 0:
		return 0
	case 1:
		return int(key[0]) << 8
	}
	return sdk.KeyGroupOf(key)
}

// slot returns the slot of key group g; groups outside the range (which the runner never
// writes, but a backend must not fail on) wrap around.
func (l *layout) slot(g int) int {
	i := (g - l.start) % l.groups
	if i < 0 {
		i += l.groups
	}
	return i % l.slots
}

// shardOf returns the shard holding key.
func (l *layout) shardOf(key []byte) int {
	s := l.slot(paddedGroup(key)) * l.perGroup
	if l.perGroup > 1 {
		s += int(maphash.Bytes(l.seed, key) % uint64(l.perGroup))
	}
	return s
}

// shardsFor returns the shards that may hold keys in [start, end) (nil end: no bound).
func (l *layout) shardsFor(start, end []byte) []int {
	gs, ge := paddedGroup(start), 1<<16-1
	if end != nil {
		ge = paddedGroup(end)
	}
	var out []int
	if ge-gs+1 >= l.groups {
		out = make([]int, l.n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	marked := make([]bool, l.slots)
	for g := gs; g <= ge; g++ {
		s := l.slot(g)
		if marked[s] {
			continue
		}
		marked[s] = true
		for j := range l.perGroup {
			out = append(out, s*l.perGroup+j)
		}
	}
	return out
}

// writable returns the map of shard i to change, after settling the pending snapshots'
// views of the shard. The shard's mutex must be held.
func (kb *keyed) writable(i int, sh *shard) map[string][]byte {
	if sh.seen != kb.epoch.Load() {
		kb.pinLocked(i, sh)
	}
	if sh.t.refs > 0 {
		sh.t = &table{m: maps.Clone(sh.t.m)}
	}
	return sh.t.m
}

// pinLocked hands shard i's current table to every pending snapshot that does not hold a
// view of the shard yet: no write reached the shard since such a snapshot was taken, so the
// current table is its view. The shard's mutex must be held.
func (kb *keyed) pinLocked(i int, sh *shard) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	for _, s := range kb.pending {
		if s.tables[i] == nil {
			s.tables[i] = sh.t
			sh.t.refs++
		}
	}
	sh.seen = kb.epoch.Load()
}

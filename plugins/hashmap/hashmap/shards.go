package hashmap

import (
	"hash/maphash"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// targetShards is about how many shards a keyed backend's state is split into: the unit of
// copy-on-write, so that the first write to a shard after a snapshot clones 1/256 of the
// state at most.
const targetShards = 256

// shard is a part of a keyed backend's state.
type shard struct {
	mu sync.Mutex
	m  map[string][]byte
	// active are the pending snapshots that have not serialized this shard yet; a write
	// first saves the key's previous value in each one's undo log. Guarded by mu.
	active []*snapshot
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

// preimage is the value a key had when a snapshot was taken.
type preimage struct {
	v       []byte
	present bool
}

// writable returns the map of shard i to change key in, after saving key's current value
// for the pending snapshots that still need it. The shard's mutex must be held.
func (sh *shard) writable(i int, key []byte) map[string][]byte {
	for _, s := range sh.active {
		u := s.undo[i]
		if u == nil {
			u = make(map[string]preimage)
			s.undo[i] = u
		} else if _, saved := u[string(key)]; saved {
			continue
		}
		v, ok := sh.m[string(key)]
		u[string(key)] = preimage{v, ok}
	}
	return sh.m
}

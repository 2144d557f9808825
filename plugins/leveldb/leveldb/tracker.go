package leveldb

import (
	"slices"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// trackedKeyBytes is what the tracker counts for a key besides its bytes: the string's
// header and allocation, and its slot in the set's map (which grows by doubling).
const trackedKeyBytes = 96

// keySet is a set of state keys.
type keySet map[string]struct{}

// pendingSnapshot is a checkpoint snapshot taken since the last completed checkpoint the
// backend knows of.
type pendingSnapshot struct {
	id int64
	// keys were written between the previous snapshot and this one; nil when they were not
	// tracked (too many), which rules out a delta until a later base completes.
	keys keySet
	// bytes is what keys counts towards the tracker's limit.
	bytes int64
	// chain is what the snapshot's handle references, set once its Write succeeded.
	chain *chain
}

// tracker remembers, for an incremental keyed backend, the keys written since the last
// completed checkpoint, split by the snapshots taken since, and the chain of files of that
// checkpoint. A snapshot freezes the keys written since the last completed checkpoint: the
// keys of the snapshots taken since (whether they will complete, were aborted or were
// never confirmed) and of the writes since the last snapshot.
//
// Write, Snapshot and the notifications are called from one goroutine; a snapshot's Write
// runs concurrently with them, hence the mutex.
type tracker struct {
	mu        sync.Mutex
	current   keySet // keys written since the last snapshot; nil while not tracking
	pending   []*pendingSnapshot
	confirmed *chain // the chain of the newest completed checkpoint; nil: none usable
	// limit bounds tracked, the memory of the keys held in current and pending (each
	// counted once per set, at its length plus trackedKeyBytes); currentBytes is current's
	// share. Beyond it the backend stops tracking and its next checkpoint writes a new
	// base: a delta of that many keys would not be much smaller than a base anyway.
	limit, tracked, currentBytes int64
}

// newTracker returns a tracker whose keys take at most limit bytes (see tracker.limit).
func newTracker(limit int64) *tracker { return &tracker{current: make(keySet), limit: limit} }

// wrote records the keys of a write.
func (t *tracker) wrote(muts []sdk.Mutation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, mu := range muts {
		if !t.add(string(mu.Key)) {
			return
		}
	}
}

// add adds k to the current set; it reports false when tracking stopped. t.mu is held.
func (t *tracker) add(k string) bool {
	if t.current == nil {
		return false
	}
	if _, ok := t.current[k]; ok {
		return true
	}
	t.current[k] = struct{}{}
	n := int64(len(k)) + trackedKeyBytes
	t.currentBytes += n
	if t.tracked += n; t.tracked > t.limit {
		t.overflow()
		return false
	}
	return true
}

// overflow stops tracking until the next snapshot, which must then be a base. t.mu is
// held.
func (t *tracker) overflow() {
	t.current = nil
	for _, p := range t.pending {
		p.keys, p.bytes = nil, 0
	}
	t.tracked, t.currentBytes = 0, 0
}

// plan is what a new checkpoint snapshot writes: a delta of keys over base, or (base nil)
// a full base.
type plan struct {
	base *chain
	keys []keySet // the sets whose union the delta holds; not modified after the snapshot
}

// snapshot registers checkpoint id's snapshot and returns its plan: a delta over the
// confirmed chain when every key written since is known and the chain is still worth
// extending, else a new base. full asks for a new base (sdk.SnapshotOptions.Full): the
// snapshot must not reference the confirmed chain's files.
func (t *tracker) snapshot(id int64, full bool) plan {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, &pendingSnapshot{id: id, keys: t.current, bytes: t.currentBytes})
	t.current, t.currentBytes = make(keySet), 0
	if full || t.confirmed == nil || !t.confirmed.extendable() {
		return plan{}
	}
	p := plan{base: t.confirmed}
	for _, s := range t.pending {
		if s.keys == nil {
			return plan{}
		}
		p.keys = append(p.keys, s.keys)
	}
	return p
}

// written records the chain snapshot id's handle references.
func (t *tracker) written(id int64, c *chain) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.pending {
		if s.id == id {
			s.chain = c
		}
	}
}

// completed makes checkpoint id's chain the base of later deltas and forgets the keys
// written before its snapshot. When the backend has no written snapshot of id (it never
// took part in it), the next snapshot is a base.
func (t *tracker) completed(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var done *pendingSnapshot
	keep := t.pending[:0]
	for _, s := range t.pending {
		switch {
		case s.id == id:
			done = s
			t.tracked -= s.bytes
		case s.id < id:
			t.tracked -= s.bytes
		default:
			keep = append(keep, s)
		}
	}
	clear(t.pending[len(keep):])
	t.pending = keep
	if done != nil && done.chain != nil {
		t.confirmed = done.chain
	} else {
		t.confirmed = nil
	}
}

// aborted forgets checkpoint id's snapshot; its keys move to the current set, so that the
// next snapshot still holds them.
func (t *tracker) aborted(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.pending, func(s *pendingSnapshot) bool { return s.id == id })
	if i < 0 {
		return
	}
	s := t.pending[i]
	t.pending = slices.Delete(t.pending, i, i+1)
	if s.keys == nil {
		t.overflow()
		return
	}
	t.tracked -= s.bytes
	for k := range s.keys {
		if !t.add(k) {
			return
		}
	}
}

// restored starts over after a restore: c (nil for none) is the chain the restored state
// came from, and nothing was written since.
func (t *tracker) restored(c *chain) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current, t.pending, t.confirmed, t.tracked, t.currentBytes = make(keySet), nil, c, 0, 0
}

// union returns the keys of sets, sorted.
func union(sets []keySet) []string {
	n := 0
	for _, s := range sets {
		n += len(s)
	}
	seen := make(keySet, n)
	out := make([]string, 0, n)
	for _, s := range sets {
		for k := range s {
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

package state

// valueCache holds state values between micro-batches: values the backend has, or will
// have once the writes in flight are done (nil: absent). It keeps two generations of at
// most max entries each; when the young one is full it becomes the old one, and the old
// one is dropped. Values used again move to the young generation when they are written.
//
// The maps hold slots, not values: a batch keeps the slot of each key it found, so that
// writing a key's new value back is a store through the slot, not a map assignment, while
// the slot is in the young generation.
type valueCache struct {
	young, old map[string]*slot
	gen        int64 // generations started so far: the young one's number
	max        int   // entries per generation; 0 keeps nothing
}

// slot is a cached value; gen is the generation whose map holds it last. entry is the
// key's entry in the Store's batch number batch, so that a batch finds it without a map.
// out is the index of the key's mutation in the write the Store is gathering, when
// outSeq is that write's number plus one (Store.outSeq+1).
//
// own is memory for the key's values that only the store references (Store.setValue): a
// value update copies into it, so a small value (up to len(inline) bytes, a counter or a
// sum) lives in the slot itself and updating it allocates nothing. Writes get copies of
// it when they are sent, so no write in flight ever sees it change.
type slot struct {
	key    string // the map key it is under
	value  []byte
	gen    int64
	entry  *entry
	batch  int64
	out    int
	outSeq int64
	own    []byte
	inline [16]byte
}

func newValueCache(max int) valueCache {
	return valueCache{young: map[string]*slot{}, old: map[string]*slot{}, max: max}
}

// get returns the slot cached for key; its gen says whether it is in the young
// generation.
func (c *valueCache) get(key []byte) (*slot, bool) {
	if sl, ok := c.young[string(key)]; ok {
		return sl, true
	}
	sl, ok := c.old[string(key)]
	return sl, ok
}

// isYoung reports whether sl is in the young generation.
func (c *valueCache) isYoung(sl *slot) bool { return sl != nil && sl.gen == c.gen }

// put caches value for key in the young generation and returns its slot (nil when the
// cache keeps nothing). sl is the slot get returned for key, or nil: a young one is
// written through, an old one moves to the young generation.
func (c *valueCache) put(key string, value []byte, sl *slot) *slot {
	if c.max <= 0 {
		return nil
	}
	if c.isYoung(sl) {
		sl.value = value
		return sl
	}
	if sl == nil {
		sl = &slot{key: key}
	}
	sl.value, sl.gen = value, c.gen
	c.young[key] = sl
	return sl
}

// full reports whether n more values would overfill the young generation.
func (c *valueCache) full(n int) bool { return c.max > 0 && len(c.young)+n > c.max }

// rotate starts a generation: the young one becomes the old one, the old one is dropped.
// It reports whether that dropped any value.
func (c *valueCache) rotate() bool {
	dropped := len(c.old) > 0
	c.old, c.young = c.young, c.old
	clear(c.young)
	c.gen++
	return dropped
}

// reset drops every value.
func (c *valueCache) reset() {
	clear(c.young)
	clear(c.old)
	c.gen++
}

package state

// valueCache holds state values between micro-batches: values the backend has, or will
// have once the writes in flight are done (nil: absent). It keeps two generations of at
// most max entries each; when the young one is full it becomes the old one, and the old
// one is dropped. Values used again move to the young generation when they are written.
type valueCache struct {
	young, old map[string][]byte
	gen        int64 // generations started so far: the young one's number
	max        int   // entries per generation; 0 keeps nothing
}

func newValueCache(max int) valueCache {
	return valueCache{young: map[string][]byte{}, old: map[string][]byte{}, max: max}
}

// get returns the value cached for key, and whether it is in the young generation.
func (c *valueCache) get(key []byte) (value []byte, young, ok bool) {
	if v, ok := c.young[string(key)]; ok {
		return v, true, true
	}
	v, ok := c.old[string(key)]
	return v, false, ok
}

// put caches value for key in the young generation.
func (c *valueCache) put(key string, value []byte) {
	if c.max > 0 {
		c.young[key] = value
	}
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

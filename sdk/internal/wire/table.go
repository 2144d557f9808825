package wire

import "sync"

// Table holds server-side objects (keyed backends, snapshots, accesses, locations) under
// ids that the host uses to name them. The zero Table is ready to use and safe for
// concurrent use.
type Table[T any] struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]T
}

// Add stores v and returns its id, never 0.
func (t *Table[T]) Add(v T) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[uint64]T)
	}
	t.next++
	t.m[t.next] = v
	return t.next
}

// Get returns the object with the given id.
func (t *Table[T]) Get(id uint64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[id]
	return v, ok
}

// Remove deletes the object with the given id and returns it.
func (t *Table[T]) Remove(id uint64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[id]
	delete(t.m, id)
	return v, ok
}

// RemoveIf deletes and returns every object for which remove returns true.
func (t *Table[T]) RemoveIf(remove func(T) bool) []T {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []T
	for id, v := range t.m {
		if remove(v) {
			out = append(out, v)
			delete(t.m, id)
		}
	}
	return out
}

// Len returns the number of objects held.
func (t *Table[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

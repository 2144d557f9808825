package state

import (
	"encoding/binary"
	"fmt"
)

// Value is a single value per key.
type Value[T any] struct {
	name  string
	codec Codec[T]
}

// NewValue declares a value state.
func NewValue[T any](name string, codec Codec[T]) *Value[T] { return &Value[T]{name, codec} }

// StateName implements Descriptor.
func (v *Value[T]) StateName() string { return v.name }

// StateType implements Descriptor. A reducing state is laid out as a value state.
func (v *Value[T]) StateType() string { return fmt.Sprintf("value[%T]", v.codec) }

// Get returns the current key's value and whether it is set.
func (v *Value[T]) Get(s *Store) (T, bool, error) {
	var zero T
	b, err := s.get(v.name)
	if err != nil || b == nil {
		return zero, false, err
	}
	x, err := v.codec.Decode(b)
	if err != nil {
		return zero, false, fmt.Errorf("state %q: %w", v.name, err)
	}
	return x, true, nil
}

// Update sets the current key's value.
func (v *Value[T]) Update(s *Store, x T) error {
	s.enc = v.codec.Encode(s.enc[:0], x)
	return s.setValue(v.name, s.enc)
}

// Clear removes the current key's value.
func (v *Value[T]) Clear(s *Store) error { return s.set(v.name, nil) }

// Reducing keeps one value per key, combining each added value with the current one.
type Reducing[T any] struct {
	Value[T]
	reduce func(a, b T) T
}

// NewReducing declares a reducing state.
func NewReducing[T any](name string, codec Codec[T], reduce func(a, b T) T) *Reducing[T] {
	return &Reducing[T]{Value[T]{name, codec}, reduce}
}

// Add combines x into the current key's value and returns the result.
func (r *Reducing[T]) Add(s *Store, x T) (T, error) {
	cur, ok, err := r.Get(s)
	if err != nil {
		return cur, err
	}
	if ok {
		x = r.reduce(cur, x)
	}
	return x, r.Update(s, x)
}

// List keeps a list of values per key.
type List[T any] struct {
	name  string
	codec Codec[T]
}

// NewList declares a list state.
func NewList[T any](name string, codec Codec[T]) *List[T] { return &List[T]{name, codec} }

// StateName implements Descriptor.
func (l *List[T]) StateName() string { return l.name }

// StateType implements Descriptor.
func (l *List[T]) StateType() string { return fmt.Sprintf("list[%T]", l.codec) }

// Get returns the current key's list (nil when empty).
func (l *List[T]) Get(s *Store) ([]T, error) {
	b, err := s.get(l.name)
	if err != nil {
		return nil, err
	}
	var out []T
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return nil, fmt.Errorf("state %q: malformed list", l.name)
		}
		x, err := l.codec.Decode(b[w : w+int(n)])
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", l.name, err)
		}
		out = append(out, x)
		b = b[w+int(n):]
	}
	return out, nil
}

// Add appends x to the current key's list without decoding it.
func (l *List[T]) Add(s *Store, x T) error {
	b, err := s.get(l.name)
	if err != nil {
		return err
	}
	return s.set(l.name, appendElem(append(make([]byte, 0, len(b)+16), b...), l.codec, x))
}

// Update replaces the current key's list.
func (l *List[T]) Update(s *Store, xs []T) error {
	if len(xs) == 0 {
		return s.set(l.name, nil)
	}
	b := make([]byte, 0, 16*len(xs))
	for _, x := range xs {
		b = appendElem(b, l.codec, x)
	}
	return s.set(l.name, b)
}

// Clear removes the current key's list.
func (l *List[T]) Clear(s *Store) error { return s.set(l.name, nil) }

func appendElem[T any](b []byte, c Codec[T], x T) []byte {
	e := c.Encode(nil, x)
	b = binary.AppendUvarint(b, uint64(len(e)))
	return append(b, e...)
}

// Map keeps a map per key.
type Map[K comparable, V any] struct {
	name   string
	keys   Codec[K]
	values Codec[V]
}

// NewMap declares a map state.
func NewMap[K comparable, V any](name string, keys Codec[K], values Codec[V]) *Map[K, V] {
	return &Map[K, V]{name, keys, values}
}

// StateName implements Descriptor.
func (m *Map[K, V]) StateName() string { return m.name }

// StateType implements Descriptor.
func (m *Map[K, V]) StateType() string { return fmt.Sprintf("map[%T,%T]", m.keys, m.values) }

// Entries returns the current key's map (empty, never nil).
func (m *Map[K, V]) Entries(s *Store) (map[K]V, error) {
	b, err := s.get(m.name)
	if err != nil {
		return nil, err
	}
	out := map[K]V{}
	for len(b) > 0 {
		kb, rest, ok := nextChunk(b)
		if !ok {
			return nil, fmt.Errorf("state %q: malformed map", m.name)
		}
		vb, rest, ok := nextChunk(rest)
		if !ok {
			return nil, fmt.Errorf("state %q: malformed map", m.name)
		}
		k, err := m.keys.Decode(kb)
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", m.name, err)
		}
		v, err := m.values.Decode(vb)
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", m.name, err)
		}
		out[k] = v
		b = rest
	}
	return out, nil
}

// Get returns the value of k in the current key's map.
func (m *Map[K, V]) Get(s *Store, k K) (V, bool, error) {
	all, err := m.Entries(s)
	v, ok := all[k]
	return v, ok, err
}

// Put sets k to v in the current key's map.
func (m *Map[K, V]) Put(s *Store, k K, v V) error {
	all, err := m.Entries(s)
	if err != nil {
		return err
	}
	all[k] = v
	return m.store(s, all)
}

// Remove deletes k from the current key's map.
func (m *Map[K, V]) Remove(s *Store, k K) error {
	all, err := m.Entries(s)
	if err != nil {
		return err
	}
	delete(all, k)
	return m.store(s, all)
}

// Clear removes the current key's map.
func (m *Map[K, V]) Clear(s *Store) error { return s.set(m.name, nil) }

func (m *Map[K, V]) store(s *Store, all map[K]V) error {
	if len(all) == 0 {
		return s.set(m.name, nil)
	}
	b := make([]byte, 0, 32*len(all))
	for k, v := range all {
		b = appendElem(b, m.keys, k)
		b = appendElem(b, m.values, v)
	}
	return s.set(m.name, b)
}

func nextChunk(b []byte) (chunk, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

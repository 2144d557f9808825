package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
)

// Descriptor is what every kind of typed state shares: a name unique within its operator.
type Descriptor interface {
	// StateName returns the state's name.
	StateName() string
}

// Stats count the calls a Store made to its keyed backend.
type Stats struct {
	// Records is the number of records processed.
	Records int64
	// GetCalls and WriteCalls are the batched backend calls made.
	GetCalls, WriteCalls int64
	// KeysRead and KeysWritten are the state keys those calls carried.
	KeysRead, KeysWritten int64
	// CacheHits counts state values found in the store's cache instead of being read.
	CacheHits int64
	// BytesSent are the key and value bytes the calls passed to the backend (the keys of
	// Get, the keys and values of Write); BytesReceived the value bytes Get returned. With
	// a plugin backend these cross the process boundary (protobuf framing comes on top).
	BytesSent, BytesReceived int64
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Records += o.Records
	s.GetCalls += o.GetCalls
	s.WriteCalls += o.WriteCalls
	s.KeysRead += o.KeysRead
	s.KeysWritten += o.KeysWritten
	s.CacheHits += o.CacheHits
	s.BytesSent += o.BytesSent
	s.BytesReceived += o.BytesReceived
}

// Store gives the typed state of one keyed operator subtask, backed by a keyed state
// backend. It works in micro-batches: ProcessBatch reads the state of the batch's distinct
// keys in one call, runs the user function for every record in order against a local
// cache, and writes the changed entries back in one call. It is never one backend call per
// record.
type Store struct {
	backend  sdk.KeyedStateBackend
	maxP     int
	names    []string
	cache    map[string]*entry
	warm     map[string][]byte // values known from earlier batches (nil: absent), see SetCacheEntries
	warmMax  int
	pipe     sdk.PipelinedWriter // the backend, when it takes writes and reads pipelined; else nil
	order    []string            // dirty keys in first-write order
	curKey   []byte
	curGroup int
	ctx      context.Context
	pending  []*pendingWrite // writes in flight, oldest first; see flush
	stats    Stats
	scratch  []byte
}

// DefaultCacheEntries is how many state values a Store keeps between micro-batches.
const DefaultCacheEntries = 1 << 16

type entry struct {
	value   []byte // nil when absent
	dirty   bool
	fetched bool
}

// NewStore returns a Store over backend for an operator declaring the given states.
func NewStore(backend sdk.KeyedStateBackend, maxParallelism int, states []Descriptor) (*Store, error) {
	s := &Store{backend: backend, maxP: maxParallelism, cache: map[string]*entry{}, warm: map[string][]byte{}, warmMax: DefaultCacheEntries}
	s.pipe, _ = backend.(sdk.PipelinedWriter)
	seen := map[string]bool{}
	for _, d := range states {
		n := d.StateName()
		if n == "" || len(n) > 255 {
			return nil, fmt.Errorf("state name %q: must be 1 to 255 bytes", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("state name %q declared twice", n)
		}
		seen[n] = true
		s.names = append(s.names, n)
	}
	return s, nil
}

// Stats returns the counts so far.
func (s *Store) Stats() Stats { return s.stats }

// Backend returns the keyed backend under the store.
func (s *Store) Backend() sdk.KeyedStateBackend { return s.backend }

// stateKey builds the backend key: key group, state name, record key.
func stateKey(dst []byte, group int, name string, key []byte) []byte {
	dst = append(dst, byte(group>>8), byte(group), byte(len(name)))
	dst = append(dst, name...)
	return append(dst, key...)
}

// ProcessBatch runs fn(i) for each record key keys[i], in order, with the state of
// keys[i] current. All declared states of the batch's distinct keys that are not cached are
// read in one call before, and the changed ones written in one call after; that write
// completes in the background (see Sync).
func (s *Store) ProcessBatch(ctx context.Context, keys [][]byte, fn func(i int) error) error {
	s.ctx = ctx
	defer func() { s.ctx = nil }()
	groups := make([]int, len(keys))
	var fetch [][]byte
	for i, k := range keys {
		g := KeyGroupFor(k, s.maxP)
		groups[i] = g
		for _, n := range s.names {
			sk := stateKey(nil, g, n, k)
			if _, ok := s.cache[string(sk)]; ok {
				continue
			}
			if v, ok := s.warm[string(sk)]; ok {
				s.cache[string(sk)] = &entry{value: v, fetched: true}
				s.stats.CacheHits++
				continue
			}
			s.cache[string(sk)] = &entry{}
			fetch = append(fetch, sk)
		}
	}
	if len(fetch) > 0 {
		vals, err := s.read(ctx, fetch)
		if err != nil {
			return err
		}
		s.stats.GetCalls++
		s.stats.KeysRead += int64(len(fetch))
		for i, sk := range fetch {
			e := s.cache[string(sk)]
			e.value, e.fetched = vals[i], true
			s.remember(string(sk), vals[i])
			s.stats.BytesSent += int64(len(sk))
			s.stats.BytesReceived += int64(len(vals[i]))
		}
	}
	for i := range keys {
		s.curKey, s.curGroup = keys[i], groups[i]
		if err := fn(i); err != nil {
			return err
		}
	}
	s.stats.Records += int64(len(keys))
	s.curKey = nil
	return s.flush(ctx)
}

// read reads keys from the backend after the writes in flight have applied. A plugin
// backend takes the read on the pipeline behind the writes; any other waits for them first.
func (s *Store) read(ctx context.Context, keys [][]byte) ([][]byte, error) {
	var vals [][]byte
	var err error
	if s.pipe != nil {
		vals, err = s.pipe.GetAfterWrites(ctx, keys)
		if serr := s.Sync(); serr != nil { // answered already: the read came after them
			return nil, serr
		}
	} else {
		if err := s.Sync(); err != nil {
			return nil, err
		}
		vals, err = s.backend.Get(ctx, keys)
	}
	if err != nil {
		return nil, fmt.Errorf("read state of %d keys: %w", len(keys), err)
	}
	return vals, nil
}

func (s *Store) flush(ctx context.Context) error {
	defer func() {
		clear(s.cache)
		s.order = s.order[:0]
	}()
	if len(s.order) == 0 {
		return nil
	}
	if len(s.pending) >= MaxWritesInFlight {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	muts := make([]sdk.Mutation, 0, len(s.order))
	for _, k := range s.order {
		e := s.cache[k]
		s.stats.BytesSent += int64(len(k) + len(e.value))
		s.remember(k, e.value)
		if e.value == nil {
			muts = append(muts, sdk.Mutation{Key: []byte(k), Delete: true})
		} else {
			muts = append(muts, sdk.Mutation{Key: []byte(k), Value: e.value})
		}
	}
	s.stats.WriteCalls++
	s.stats.KeysWritten += int64(len(muts))
	// The write goes on while the next batches are processed: the backend works on it
	// while the subtask works on the next records. Writes apply in order, each after the
	// one before; Sync waits for all of them before anything else reaches the backend.
	if s.pipe != nil {
		// A plugin process: the batches stream to it, several in flight.
		wait := s.pipe.StartWrite(ctx, muts)
		s.pending = append(s.pending, &pendingWrite{wait: func() error {
			if err := wait(); err != nil {
				return fmt.Errorf("write state of %d keys: %w", len(muts), err)
			}
			return nil
		}})
		return nil
	}
	w := &pendingWrite{done: make(chan struct{})}
	var prev *pendingWrite
	if n := len(s.pending); n > 0 {
		prev = s.pending[n-1]
	}
	s.pending = append(s.pending, w)
	go func() {
		defer close(w.done)
		if prev != nil {
			if err := prev.result(); err != nil {
				w.err = err // the backend may hold part of it: write nothing more
				return
			}
		}
		if err := s.backend.Write(ctx, muts); err != nil {
			w.err = fmt.Errorf("write state of %d keys: %w", len(muts), err)
		}
	}()
	return nil
}

// MaxWritesInFlight is how many micro-batch writes a Store lets run behind its subtask
// before it waits for the oldest. Across a plugin boundary a write's latency is mostly
// waiting for a core and the round trip, not work; several in flight keep the subtask
// busy meanwhile.
const MaxWritesInFlight = 4

// pendingWrite is a micro-batch write in flight: a PipelinedWriter's wait, or a goroutine
// that sets err and then closes done.
type pendingWrite struct {
	wait func() error
	done chan struct{}
	err  error
}

// result waits for the write and returns its error.
func (w *pendingWrite) result() error {
	if w.wait != nil {
		return w.wait()
	}
	<-w.done
	return w.err
}

// waitOldest waits for the oldest write in flight and returns its error.
func (s *Store) waitOldest() error {
	w := s.pending[0]
	s.pending[0] = nil
	s.pending = s.pending[1:]
	err := w.result()
	if err != nil {
		clear(s.warm) // the write may have applied in part
	}
	return err
}

// Sync waits for the writes in flight, if any, and returns the first error. Call it before
// any other call on the keyed backend (snapshot, notifications, close).
func (s *Store) Sync() error {
	var first error
	for len(s.pending) > 0 {
		if err := s.waitOldest(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close waits for the writes in flight and closes the keyed backend; it returns both
// errors.
func (s *Store) Close() error {
	return errors.Join(s.Sync(), s.backend.Close())
}

// remember keeps a value the backend now holds for later batches. The keyed backend of a
// subtask is written by that subtask alone, so a remembered value stays current until the
// store writes the key again. The cache is bounded: when full it starts over.
func (s *Store) remember(key string, value []byte) {
	if s.warmMax <= 0 {
		return
	}
	if _, ok := s.warm[key]; !ok && len(s.warm) >= s.warmMax {
		clear(s.warm)
	}
	s.warm[key] = value
}

// SetCacheEntries bounds the values kept between micro-batches (0: none).
func (s *Store) SetCacheEntries(n int) {
	s.warmMax = n
	clear(s.warm)
}

// CurrentKey returns the key of the record being processed.
func (s *Store) CurrentKey() []byte { return s.curKey }

// get returns the raw value of state name for the current key.
func (s *Store) get(name string) ([]byte, error) {
	if s.curKey == nil {
		return nil, fmt.Errorf("state %q accessed outside of keyed processing", name)
	}
	s.scratch = stateKey(s.scratch[:0], s.curGroup, name, s.curKey)
	if e, ok := s.cache[string(s.scratch)]; ok && e.fetched {
		return e.value, nil
	}
	// A state the operator did not declare: read it on its own (slow path).
	if err := s.Sync(); err != nil {
		return nil, err
	}
	vals, err := s.backend.Get(s.ctx, [][]byte{append([]byte(nil), s.scratch...)})
	if err != nil {
		return nil, fmt.Errorf("read state %q: %w", name, err)
	}
	s.stats.GetCalls++
	s.stats.KeysRead++
	s.stats.BytesSent += int64(len(s.scratch))
	s.stats.BytesReceived += int64(len(vals[0]))
	e := s.cache[string(s.scratch)]
	if e == nil {
		e = &entry{}
		s.cache[string(s.scratch)] = e
	}
	e.value, e.fetched = vals[0], true
	return e.value, nil
}

// set replaces the raw value of state name for the current key; nil deletes it.
func (s *Store) set(name string, v []byte) error {
	if s.curKey == nil {
		return fmt.Errorf("state %q accessed outside of keyed processing", name)
	}
	s.scratch = stateKey(s.scratch[:0], s.curGroup, name, s.curKey)
	e, ok := s.cache[string(s.scratch)]
	if !ok {
		e = &entry{fetched: true}
		s.cache[string(s.scratch)] = e
	}
	if !e.dirty {
		e.dirty = true
		s.order = append(s.order, string(s.scratch))
	}
	e.value = v
	return nil
}

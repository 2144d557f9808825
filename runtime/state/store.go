package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Descriptor is what every kind of typed state shares: a name unique within its operator,
// and a type that says how its values are laid out.
type Descriptor interface {
	// StateName returns the state's name.
	StateName() string
	// StateType describes the state's kind and codecs, for example
	// "value[state.int64Codec]". Checkpoints record it, and a restore refuses state whose
	// type changed.
	StateType() string
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
//
// The calls overlap the subtask's work. Writes gather the changes of several batches and
// complete in the background, several in flight (see Sync). Reads can start before their
// batch is processed (Prefetch), and they never wait for the writes in flight: every value
// those writes carry stays in the store's cache until they are done, so a key the store
// has to read is one no write in flight touches.
type Store struct {
	backend sdk.KeyedStateBackend
	pipe    host.PipelinedWriter // the backend's, or host.LocalPipeline's for one in this process
	maxP    int
	names   []string
	cache   map[string]*entry // the batch's entries of keys the value cache lacked
	batch   int64             // batches started, see slot.batch
	vc      valueCache        // values known from earlier batches, see SetCacheEntries
	// complete says the cache holds every value the backend has (or will have once the
	// writes in flight are done), so a key it does not hold is absent: see StartEmpty.
	complete bool
	fetching map[string]fetchRef // keys whose read Prefetch started, until a batch takes them
	reads    []*pendingRead      // reads started and not waited for yet, oldest first
	order    []*entry            // dirty entries in first-write order
	groups   []int               // scratch for key groups, see keyGroups
	slab     []entry             // the batch's entries, see ProcessBatch
	// byRecord holds the batch's entry of each record and declared state, record by
	// record (len(names) per record), so that reads and writes of the current record's
	// state find their entry without building its key or a lookup; cur is the current
	// record's part.
	byRecord []*entry
	cur      []*entry
	keyBuf   []byte // scratch for state keys
	curKey   []byte
	curGroup int
	ctx      context.Context
	pending  []*pendingWrite // writes in flight, oldest first; see send
	outbox   []sdk.Mutation  // changes gathered for the next write, see flush
	outBytes int             // their keys' and values' bytes
	outGen   int64           // the cache generation of the oldest of them
	lastOut  int             // mutations in the last write
	outSeq   int64           // writes sent so far; see slot.outSeq
	outCtx   context.Context // the context of the batch that gathered the newest
	stats    Stats
	scratch  []byte
	enc      []byte // Value.Update encodes into it, see setValue
	// broken is the error of a batch whose function failed: it may have changed values
	// half way, so the store writes nothing more (see ProcessBatch).
	broken error
}

// DefaultCacheEntries is how many state values a Store keeps between micro-batches, in
// each of the cache's two generations.
const DefaultCacheEntries = 1 << 16

type entry struct {
	key   string // the state key
	value []byte // nil when absent
	dirty bool
	slot  *slot // the key's slot in the value cache, nil when not cached
}

// NewStore returns a Store over backend for an operator declaring the given states.
func NewStore(backend sdk.KeyedStateBackend, maxParallelism int, states []Descriptor) (*Store, error) {
	s := &Store{backend: backend, maxP: maxParallelism, cache: map[string]*entry{},
		vc: newValueCache(DefaultCacheEntries), fetching: map[string]fetchRef{}}
	if pw, ok := backend.(host.PipelinedWriter); ok {
		s.pipe = pw
	} else {
		s.pipe = host.LocalPipeline(backend)
	}
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

// Prefetch starts reading the state of a batch that ProcessBatch will be given later, so
// that the read overlaps the work on the batches before it. Batches must then be processed
// in the order they were prefetched; a state key is read once, for the first of them.
// Without a cache between batches (SetCacheEntries(0)) it does nothing. groups are the
// keys' key groups, as ProcessBatch takes them.
func (s *Store) Prefetch(ctx context.Context, keys [][]byte, groups []int) {
	if s.vc.max <= 0 || s.complete {
		return
	}
	groups = s.keyGroups(keys, groups)
	var fetch [][]byte
	var arena []byte // the keys to read, one allocation mostly
	keyBuf := s.keyBuf
	defer func() { s.keyBuf = keyBuf }()
	for i, k := range keys {
		g := groups[i]
		for _, n := range s.names {
			sk := stateKey(keyBuf[:0], g, n, k)
			keyBuf = sk
			if _, ok := s.vc.get(sk); ok {
				continue
			}
			if _, ok := s.fetching[string(sk)]; ok {
				continue
			}
			key := string(sk)
			s.fetching[key] = fetchRef{key: key, i: len(fetch)}
			arena = append(arena, sk...)
			fetch = append(fetch, arena[len(arena)-len(sk):len(arena):len(arena)])
		}
	}
	if len(fetch) == 0 {
		return
	}
	r := s.startRead(ctx, fetch)
	for _, sk := range fetch {
		ref := s.fetching[string(sk)]
		ref.r = r
		s.fetching[ref.key] = ref
	}
}

// keyGroups returns groups, or the key groups of keys when groups is nil.
func (s *Store) keyGroups(keys [][]byte, groups []int) []int {
	if groups != nil {
		return groups
	}
	groups = s.groups[:0]
	for _, k := range keys {
		groups = append(groups, KeyGroupFor(k, s.maxP))
	}
	s.groups = groups
	return groups
}

// startRead starts reading keys, none of which a write in flight touches.
func (s *Store) startRead(ctx context.Context, keys [][]byte) *pendingRead {
	for len(s.reads) > 0 && s.reads[0].done {
		s.reads[0] = nil
		s.reads = s.reads[1:]
	}
	r := &pendingRead{n: len(keys), wait: s.pipe.StartRead(ctx, keys)}
	s.reads = append(s.reads, r)
	s.stats.GetCalls++
	s.stats.KeysRead += int64(len(keys))
	for _, k := range keys {
		s.stats.BytesSent += int64(len(k))
	}
	return r
}

// fetchRef is a key of a read Prefetch started: its value is r's i-th.
type fetchRef struct {
	key string
	r   *pendingRead
	i   int
}

// pendingRead is a read in flight.
type pendingRead struct {
	n    int
	wait func() ([][]byte, error)
	done bool
	vals [][]byte
	err  error
}

// result waits for the read and returns its values.
func (r *pendingRead) result() ([][]byte, error) {
	if !r.done {
		r.vals, r.err = r.wait()
		r.done = true
		if r.err == nil && len(r.vals) != r.n {
			r.err = fmt.Errorf("the backend returned %d values for %d keys", len(r.vals), r.n)
		}
		if r.err != nil {
			r.err = fmt.Errorf("read state of %d keys: %w", r.n, r.err)
		}
	}
	return r.vals, r.err
}

// ProcessBatch runs fn(i) for each record key keys[i], in order, with the state of
// keys[i] current. All declared states of the batch's distinct keys that are neither
// cached nor prefetched are read in one call before, and the changed ones written in one
// call after; that write completes in the background (see Sync). groups[i] is the key group
// of keys[i] (KeyGroupFor), which routing the records computed already; nil: the store
// computes them.
//
// A batch whose fn fails ends the store: its values may be changed half way (an update
// changes a cached value in place, see setValue), so every later batch returns that
// error, and Sync and Close write nothing more, as the attempt that owns the store ends.
func (s *Store) ProcessBatch(ctx context.Context, keys [][]byte, groups []int, fn func(i int) error) error {
	if s.broken != nil {
		return fmt.Errorf("an earlier batch failed: %w", s.broken)
	}
	s.ctx = ctx
	defer func() { s.ctx = nil }()
	groups = s.keyGroups(keys, groups)
	s.batch++
	if len(s.cache) > 0 || len(s.order) > 0 { // a batch before failed reading its state
		clear(s.cache)
		clear(s.order)
		s.order = s.order[:0]
	}
	// The batch's entries: pointers to them live until the batch is flushed, and the slab
	// never grows past its capacity meanwhile, so one slab serves every batch.
	slab := s.slab[:0]
	if n := len(keys) * len(s.names); cap(slab) < n {
		slab = make([]entry, 0, n)
	}
	defer func() { s.slab = slab[:0] }()
	// A key a complete store lacks is absent from the backend; making room in the cache
	// for it (see fill) lets only cached values go, so it stays absent.
	complete := s.complete
	var fetch [][]byte        // keys to read now, unless complete
	var fetchE []*entry       // their entries
	var pre []prefetchedEntry // keys Prefetch started reading
	byRecord := s.byRecord[:0]
	keyBuf := s.keyBuf // a local: no write barrier per record
	for i, k := range keys {
		for _, n := range s.names {
			sk := stateKey(keyBuf[:0], groups[i], n, k)
			keyBuf = sk
			// A cached key's entry of this batch is found through its slot, any other
			// key's through the batch's map.
			sl, cached := s.vc.get(sk)
			if cached && sl.batch == s.batch {
				byRecord = append(byRecord, sl.entry)
				continue
			}
			if !cached {
				if e, ok := s.cache[string(sk)]; ok {
					byRecord = append(byRecord, e)
					continue
				}
			}
			ref, prefetched := s.fetching[string(sk)]
			switch {
			case prefetched:
				delete(s.fetching, ref.key)
				slab = append(slab, entry{key: ref.key})
			case cached:
				slab = append(slab, entry{key: sl.key})
			default:
				slab = append(slab, entry{key: string(sk)})
			}
			e := &slab[len(slab)-1]
			if cached {
				sl.entry, sl.batch = e, s.batch
			} else {
				s.cache[e.key] = e
			}
			byRecord = append(byRecord, e)
			switch {
			case cached:
				e.value, e.slot = sl.value, sl
				s.stats.CacheHits++
			case prefetched:
				pre = append(pre, prefetchedEntry{e: e, ref: ref})
			default:
				if !complete {
					fetch = append(fetch, sk[:len(sk):len(sk)])
					keyBuf = nil // fetch keeps it
				}
				fetchE = append(fetchE, e)
			}
		}
	}
	s.keyBuf = keyBuf
	if err := s.fill(ctx, complete, fetch, fetchE, pre); err != nil {
		return err
	}
	s.byRecord = byRecord
	defer func() { clear(s.byRecord); s.cur = nil }()
	names := len(s.names)
	for i := range keys {
		s.curKey, s.curGroup = keys[i], groups[i]
		s.cur = byRecord[i*names : (i+1)*names]
		if err := fn(i); err != nil {
			s.broken = err
			return err
		}
	}
	s.stats.Records += int64(len(keys))
	s.curKey = nil
	return s.flush(ctx)
}

// prefetchedEntry is a batch's entry whose value Prefetch started reading.
type prefetchedEntry struct {
	e   *entry
	ref fetchRef
}

// fill sets the values of a batch's entries that were not cached: those of keys it reads
// now (fetch; none when the store was complete as the batch began, whose keys fetchE are
// then absent) and those Prefetch read; it keeps them for later batches.
func (s *Store) fill(ctx context.Context, complete bool, fetch [][]byte, fetchE []*entry, pre []prefetchedEntry) error {
	if err := s.makeRoom(len(fetchE) + len(pre)); err != nil {
		return err
	}
	if complete {
		// Nothing the cache lacked is in the backend: the keys are absent.
		for _, e := range fetchE {
			s.read(e, nil)
		}
		fetch = nil
	}
	if len(fetch) > 0 {
		if s.vc.max <= 0 {
			// Without the cache, a write in flight may touch any key: read after them.
			if err := s.Sync(); err != nil {
				return err
			}
		}
		vals, err := s.startRead(ctx, fetch).result()
		if err != nil {
			return err
		}
		for i, e := range fetchE {
			s.read(e, vals[i])
		}
	}
	for _, p := range pre {
		vals, err := p.ref.r.result()
		if err != nil {
			return err
		}
		s.read(p.e, vals[p.ref.i])
	}
	return nil
}

// read sets entry e to the value v the backend returned, and keeps it for later batches.
func (s *Store) read(e *entry, v []byte) {
	e.value = v
	s.remember(e)
	s.stats.BytesReceived += int64(len(v))
}

// flush gathers the batch's changed entries into the next write, and starts that write
// once it holds WriteBytes.
func (s *Store) flush(ctx context.Context) error {
	defer func() {
		clear(s.cache)
		clear(s.order)
		s.order = s.order[:0]
	}()
	if len(s.order) == 0 {
		return nil
	}
	n := 0 // keys the cache's young generation may not hold yet
	for _, e := range s.order {
		if !s.vc.isYoung(e.slot) {
			n++
		}
	}
	if err := s.makeRoom(n); err != nil {
		return err
	}
	if len(s.outbox) == 0 {
		s.outGen = s.vc.gen
	}
	size, fresh := 0, 0 // the keys new to the write: their bytes, their number
	for _, e := range s.order {
		if !s.gathered(e.slot) {
			size += len(e.key)
			fresh++
		}
	}
	if need := len(s.outbox) + fresh; need > cap(s.outbox) {
		// Double, rather than grow by append's quarter: a write gathers tens of thousands
		// of mutations, and each step copies them all.
		grown := make([]sdk.Mutation, len(s.outbox), max(need, 2*cap(s.outbox), s.lastOut))
		copy(grown, s.outbox)
		s.outbox = grown
	}
	var keys []byte // the new mutations' keys, one allocation
	if size > 0 {
		keys = make([]byte, 0, size)
	}
	for _, e := range s.order {
		s.remember(e)
		if sl := e.slot; s.gathered(sl) {
			// An earlier batch gathered into this write changed the key too: its
			// mutation takes the new value, so a key is written once per write.
			m := &s.outbox[sl.out]
			s.outBytes += len(e.value) - len(m.Value)
			m.Value, m.Delete = e.value, e.value == nil
			continue
		}
		if e.slot != nil {
			e.slot.out, e.slot.outSeq = len(s.outbox), s.outSeq+1
		}
		keys = append(keys, e.key...)
		key := keys[len(keys)-len(e.key):]
		s.outBytes += len(key) + len(e.value)
		s.outbox = append(s.outbox, sdk.Mutation{Key: key, Value: e.value, Delete: e.value == nil})
	}
	s.outCtx = ctx
	if s.outBytes < WriteBytes {
		return nil // the next batches join this write
	}
	return s.send()
}

// gathered reports whether the write being gathered has a mutation of sl's key.
func (s *Store) gathered(sl *slot) bool { return sl != nil && sl.outSeq == s.outSeq+1 }

// send starts the write of the mutations gathered. The write goes on while the next
// batches are processed: the backend works on it while the subtask works on the next
// records. Writes apply in order, each after the one before; Sync waits for all of them
// before anything else reaches the backend.
func (s *Store) send() error {
	if len(s.outbox) == 0 {
		return nil
	}
	if len(s.pending) >= MaxWritesInFlight {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	muts := s.outbox
	s.outbox, s.lastOut = nil, len(muts)
	// The values may be memory the store reuses for the keys' next values (setValue):
	// the write gets copies, in one allocation.
	n := 0
	for _, m := range muts {
		n += len(m.Value)
	}
	vals := make([]byte, 0, n)
	for i, m := range muts {
		if m.Value != nil {
			vals = append(vals, m.Value...)
			muts[i].Value = vals[len(vals)-len(m.Value) : len(vals) : len(vals)]
		}
	}
	s.outSeq++
	s.stats.WriteCalls++
	s.stats.KeysWritten += int64(len(muts))
	s.stats.BytesSent += int64(s.outBytes)
	s.outBytes = 0
	wait := s.pipe.StartWrite(s.outCtx, muts)
	s.pending = append(s.pending, &pendingWrite{gen: s.outGen, wait: func() error {
		if err := wait(); err != nil {
			return fmt.Errorf("write state of %d keys: %w", len(muts), err)
		}
		return nil
	}})
	return nil
}

// WriteBytes is how many bytes of keys and values a Store gathers, from as many
// micro-batches as it takes, before it starts writing them. A key changed by several of
// those batches is written once, with its newest value, so the write is a bounded
// write-back buffer: the more batches it spans, the fewer keys the backend has to take
// (a word count's running counts, an aggregate's sums), and each call across a plugin
// boundary carries enough to be worth its fixed cost. What it holds is in the value
// cache anyway; the buffer adds a copy of each key. Sync, which precedes every snapshot,
// writes it out.
const WriteBytes = 1 << 20

// MaxWritesInFlight is how many writes a Store lets run behind its subtask before it
// waits for the oldest. Across a plugin boundary a write's latency is mostly waiting for a
// core and the round trip, not work; several in flight keep the subtask busy meanwhile.
const MaxWritesInFlight = 8

// pendingWrite is a write in flight.
type pendingWrite struct {
	gen  int64 // the cache generation of its oldest change, which the cache keeps until it is done
	wait func() error
}

// waitOldest waits for the oldest write in flight and returns its error.
func (s *Store) waitOldest() error {
	w := s.pending[0]
	s.pending[0] = nil
	s.pending = s.pending[1:]
	err := w.wait()
	if err != nil {
		s.vc.reset() // the write may have applied in part
		s.complete = false
	}
	return err
}

// Sync writes what was gathered, waits for the writes and reads in flight, if any, and
// returns the first error of a write. Call it before any other call on the keyed backend
// (snapshot, notifications, close). A failed read is reported by the batch that needs it.
func (s *Store) Sync() error {
	if s.broken != nil {
		s.outbox, s.outBytes = nil, 0 // half made: see ProcessBatch
	}
	serr := s.send()
	for _, r := range s.reads {
		_, _ = r.result()
	}
	clear(s.reads)
	s.reads = s.reads[:0]
	first := serr
	for len(s.pending) > 0 {
		if err := s.waitOldest(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close ends the store once its subtask has ended. The changes it gathered but did not
// start writing are dropped: only what a snapshot took outlives the subtask (Sync precedes
// every snapshot), and the subtask's context, which such a write would carry, is cancelled
// by then. It waits for the writes in flight, so that none runs against a closed backend,
// and closes the keyed backend. It returns the error of a write in flight, unless the end
// of the subtask cancelled it, and the backend's.
func (s *Store) Close() error {
	s.outbox, s.outBytes = nil, 0
	err := s.Sync()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, s.backend.Close())
}

// remember keeps a value the backend holds, or will once the writes in flight are done,
// for later batches. The keyed backend of a subtask is written by that subtask alone, so a
// remembered value stays current until the store writes the key again. Call makeRoom
// first.
func (s *Store) remember(e *entry) { e.slot = s.vc.put(e.key, e.value, e.slot) }

// makeRoom makes room in the cache for n more values: when its young generation is full
// it starts a new one, and the values of the one before the last leave the cache. The
// writes that carry those must be done first, since a key the store reads must never be
// one a write in flight touches; they are, nearly always, long since.
func (s *Store) makeRoom(n int) error {
	if !s.vc.full(n) {
		return nil
	}
	if len(s.outbox) > 0 && s.outGen < s.vc.gen {
		if err := s.send(); err != nil {
			return err
		}
	}
	for len(s.pending) > 0 && s.pending[0].gen < s.vc.gen {
		if err := s.waitOldest(); err != nil {
			return err
		}
	}
	if s.vc.rotate() {
		s.complete = false // values left the cache: a key it lacks may be in the backend
	}
	return nil
}

// StartEmpty tells the store that its keyed backend holds no state: one just created
// (sdk.StateBackend.CreateKeyedStateBackend returns it empty) with nothing restored into
// it. The subtask is the backend's only writer and the cache keeps every value it writes,
// so until the cache first lets a value go a key it does not hold is absent, and batches
// read nothing from the backend. Call it before the first batch, after SetCacheEntries;
// it does nothing without a cache (SetCacheEntries(0)).
func (s *Store) StartEmpty() { s.complete = s.vc.max > 0 }

// SetCacheEntries bounds the values kept between micro-batches, per generation of the
// cache (0: none). Call it before the first batch.
func (s *Store) SetCacheEntries(n int) {
	s.vc.max = n
	s.vc.reset()
	s.complete = false
}

// CurrentKey returns the key of the record being processed.
func (s *Store) CurrentKey() []byte { return s.curKey }

// get returns the raw value of state name for the current key.
func (s *Store) get(name string) ([]byte, error) {
	if s.curKey == nil {
		return nil, fmt.Errorf("state %q accessed outside of keyed processing", name)
	}
	if e := s.declared(name); e != nil {
		return e.value, nil
	}
	s.scratch = stateKey(s.scratch[:0], s.curGroup, name, s.curKey)
	if e, ok := s.cache[string(s.scratch)]; ok {
		return e.value, nil
	}
	// A state the operator did not declare: read it on its own (slow path), once the
	// writes in flight are done, since any of them may touch it.
	if err := s.Sync(); err != nil {
		return nil, err
	}
	e := &entry{key: string(s.scratch)}
	vals, err := s.startRead(s.ctx, [][]byte{[]byte(e.key)}).result()
	if err != nil {
		return nil, fmt.Errorf("state %q: %w", name, err)
	}
	s.cache[e.key] = e
	e.value = vals[0]
	return e.value, nil
}

// setValue sets the value of state name for the current key to a copy of b (present
// even when empty). The copy goes into memory of the key's cache slot that only the store
// references (slot.own), reused for every value that fits; without a slot it is a new
// allocation.
func (s *Store) setValue(name string, b []byte) error {
	e := s.declared(name)
	if e == nil || e.slot == nil {
		return s.set(name, append(make([]byte, 0, len(b)), b...))
	}
	sl := e.slot
	if sl.own == nil {
		sl.own = sl.inline[:0]
	}
	sl.own = append(sl.own[:0], b...)
	return s.set(name, sl.own)
}

// set replaces the raw value of state name for the current key; nil deletes it.
func (s *Store) set(name string, v []byte) error {
	if s.curKey == nil {
		return fmt.Errorf("state %q accessed outside of keyed processing", name)
	}
	e := s.declared(name)
	if e == nil {
		s.scratch = stateKey(s.scratch[:0], s.curGroup, name, s.curKey)
		var ok bool
		if e, ok = s.cache[string(s.scratch)]; !ok {
			e = &entry{key: string(s.scratch)}
			s.cache[e.key] = e
		}
	}
	if !e.dirty {
		e.dirty = true
		s.order = append(s.order, e)
	}
	e.value = v
	return nil
}

// declared returns the current record's entry of state name, one the operator declared;
// nil for any other name.
func (s *Store) declared(name string) *entry {
	for i, n := range s.names {
		if n == name && i < len(s.cur) {
			return s.cur[i]
		}
	}
	return nil
}

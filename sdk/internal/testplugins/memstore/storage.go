package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// store holds the bytes and checkpoints of every job, in memory.
type store struct {
	mu        sync.Mutex
	next      int
	threshold int
	objects   map[string][]byte
	completed map[string]sdk.CompletedCheckpointStorageLocation // by external pointer
	exclusive map[string][]string                               // location reference -> refs
}

func newStore() *store {
	return &store{objects: map[string][]byte{}, completed: map[string]sdk.CompletedCheckpointStorageLocation{}, exclusive: map[string][]string{}}
}

func (s *store) setThreshold(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.threshold = n
}

func (s *store) resolve(pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.completed[pointer]
	if !ok {
		return c, fmt.Errorf("no completed checkpoint at %q: %w", pointer, sdk.ErrNotFound)
	}
	return c, nil
}

// put keeps b (inline when small) and returns its handle.
func (s *store) put(location string, scope sdk.Scope, b []byte) sdk.StreamStateHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sdk.StreamStateHandle{Size: int64(len(b)), Scope: scope}
	if len(b) < s.threshold {
		h.Inline = append([]byte{}, b...)
		return h
	}
	s.next++
	h.Ref = fmt.Sprintf("mem://%s/%d", location, s.next)
	s.objects[h.Ref] = b
	if scope == sdk.ScopeExclusive {
		s.exclusive[location] = append(s.exclusive[location], h.Ref)
	}
	return h
}

type access struct {
	s            *store
	job          string
	savepointDir string
}

func (a *access) SupportsHighlyAvailableStorage() bool { return false }

func (a *access) HasDefaultSavepointLocation() bool { return a.savepointDir != "" }

func (a *access) InitializeBaseLocationsForCheckpoint(context.Context) error { return nil }

func (a *access) InitializeLocationForCheckpoint(_ context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	return &location{s: a.s, ref: fmt.Sprintf("%s/chk-%d", a.job, id), id: id}, nil
}

func (a *access) InitializeLocationForSavepoint(_ context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	if target == "" {
		target = a.savepointDir
	}
	if target == "" {
		//lint:ignore ST1005 Flink's message, word for word
		return nil, fmt.Errorf("No savepoint location given and no default location configured.: %w", sdk.ErrInvalidArgument)
	}
	return &location{s: a.s, ref: fmt.Sprintf("%s/savepoint-%d", target, id), id: id}, nil
}

func (a *access) ListCompletedCheckpoints(context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	var out []sdk.CompletedCheckpointStorageLocation
	for p, c := range a.s.completed {
		if strings.HasPrefix(p, a.job+"/chk-") {
			out = append(out, c)
		}
	}
	sortCompleted(out)
	return out, nil
}

func sortCompleted(cs []sdk.CompletedCheckpointStorageLocation) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].CheckpointID < cs[j-1].CheckpointID; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func (a *access) OpenState(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	b, ok := a.s.objects[h.Ref]
	if !ok {
		return nil, fmt.Errorf("state %q: %w", h.Ref, sdk.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (a *access) DiscardState(_ context.Context, hs []sdk.StreamStateHandle) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	for _, h := range hs {
		delete(a.s.objects, h.Ref)
	}
	return nil
}

func (a *access) DisposeCheckpoint(_ context.Context, c sdk.CompletedCheckpointStorageLocation) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	delete(a.s.completed, c.ExternalPointer)
	delete(a.s.objects, c.Metadata.Ref)
	for _, ref := range a.s.exclusive[c.ExternalPointer] {
		delete(a.s.objects, ref)
	}
	delete(a.s.exclusive, c.ExternalPointer)
	return nil
}

func (a *access) Close() error { return nil }

type location struct {
	s   *store
	ref string
	id  int64
}

func (l *location) LocationReference() string { return l.ref }

func (l *location) CreateCheckpointStateOutputStream(_ context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &stateOut{l: l, scope: scope}, nil
}

func (l *location) CreateMetadataOutputStream(context.Context) (sdk.MetadataOutputStream, error) {
	return &metaOut{l: l}, nil
}

func (l *location) DisposeOnFailure(context.Context) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for _, ref := range l.s.exclusive[l.ref] {
		delete(l.s.objects, ref)
	}
	delete(l.s.exclusive, l.ref)
	return nil
}

type stateOut struct {
	l     *location
	scope sdk.Scope
	buf   bytes.Buffer
	done  bool
}

func (o *stateOut) Write(p []byte) (int, error) {
	if o.done {
		return 0, errors.New("memstore: write to a closed stream")
	}
	return o.buf.Write(p)
}

func (o *stateOut) CloseAndGetHandle(context.Context) (sdk.StreamStateHandle, error) {
	if o.done {
		return sdk.StreamStateHandle{}, errors.New("memstore: stream closed twice")
	}
	o.done = true
	return o.l.s.put(o.l.ref, o.scope, o.buf.Bytes()), nil
}

func (o *stateOut) Close() error {
	o.done = true
	o.buf = bytes.Buffer{}
	return nil
}

type metaOut struct {
	l    *location
	buf  bytes.Buffer
	done bool
}

func (o *metaOut) Write(p []byte) (int, error) { return o.buf.Write(p) }

func (o *metaOut) CloseAndFinalize(context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	if o.done {
		return sdk.CompletedCheckpointStorageLocation{}, errors.New("memstore: metadata closed twice")
	}
	o.done = true
	s := o.l.s
	s.mu.Lock()
	_, exists := s.completed[o.l.ref]
	s.mu.Unlock()
	if exists {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("metadata of %s already exists", o.l.ref)
	}
	h := s.put(o.l.ref+"/_metadata", sdk.ScopeExclusive, o.buf.Bytes())
	c := sdk.CompletedCheckpointStorageLocation{ExternalPointer: o.l.ref, Metadata: h, CheckpointID: o.l.id, Time: time.Now()}
	s.mu.Lock()
	s.completed[o.l.ref] = c
	s.mu.Unlock()
	return c, nil
}

func (o *metaOut) Close() error {
	o.done = true
	return nil
}

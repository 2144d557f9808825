package dataflow_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// event is something the probe saw happen to a checkpoint: "trigger" (its location was
// initialized), "complete" (its metadata was finalized) or "dispose" (it was aborted).
type event struct {
	kind string
	id   int64
	at   time.Time
}

// probe wraps a checkpoint storage to record when each checkpoint is triggered, completed
// and aborted, and to hold the state streams of chosen checkpoints back until another event
// happened, so that tests control which checkpoints are in flight together.
type probe struct {
	sdk.CheckpointStorage
	mu     sync.Mutex
	events []event
	seen   map[string]chan struct{}
	// hold maps a checkpoint id to the event ("dispose 2", "trigger 3") that releases its
	// state streams.
	hold map[int64]string
}

func newProbe(s sdk.CheckpointStorage) *probe {
	return &probe{CheckpointStorage: s, seen: map[string]chan struct{}{}, hold: map[int64]string{}}
}

// when returns a channel closed once event "kind id" happened.
func (p *probe) when(name string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.channel(name)
}

// channel returns the channel of an event; p.mu is held.
func (p *probe) channel(name string) chan struct{} {
	ch, ok := p.seen[name]
	if !ok {
		ch = make(chan struct{})
		p.seen[name] = ch
	}
	return ch
}

func (p *probe) record(kind string, id int64, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := p.channel(fmt.Sprintf("%s %d", kind, id))
	p.events = append(p.events, event{kind, id, at})
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// log returns the events so far, in order.
func (p *probe) log() []event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]event(nil), p.events...)
}

// CreateCheckpointStorage implements sdk.CheckpointStorage.
func (p *probe) CreateCheckpointStorage(ctx context.Context, job string) (sdk.CheckpointStorageAccess, error) {
	a, err := p.CheckpointStorage.CreateCheckpointStorage(ctx, job)
	return &probeAccess{a, p}, err
}

type probeAccess struct {
	sdk.CheckpointStorageAccess
	p *probe
}

// InitializeLocationForCheckpoint records the trigger: the coordinator calls it once it
// decided to start the checkpoint.
func (a *probeAccess) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	a.p.record("trigger", id, time.Now())
	loc, err := a.CheckpointStorageAccess.InitializeLocationForCheckpoint(ctx, id)
	return &probeLocation{loc, a.p, id}, err
}

type probeLocation struct {
	sdk.CheckpointStorageLocation
	p  *probe
	id int64
}

func (l *probeLocation) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	s, err := l.CheckpointStorageLocation.CreateCheckpointStateOutputStream(ctx, scope)
	return &probeStream{s, l}, err
}

func (l *probeLocation) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	s, err := l.CheckpointStorageLocation.CreateMetadataOutputStream(ctx)
	return &probeMetadata{s, l}, err
}

// DisposeOnFailure records the abort.
func (l *probeLocation) DisposeOnFailure(ctx context.Context) error {
	err := l.CheckpointStorageLocation.DisposeOnFailure(ctx)
	l.p.record("dispose", l.id, time.Now())
	return err
}

type probeStream struct {
	sdk.CheckpointStateOutputStream
	l *probeLocation
}

// CloseAndGetHandle waits for the event that releases the checkpoint, if it is held.
func (s *probeStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.l.p.mu.Lock()
	release, held := s.l.p.hold[s.l.id]
	s.l.p.mu.Unlock()
	if held {
		select {
		case <-s.l.p.when(release):
		case <-ctx.Done():
			s.CheckpointStateOutputStream.Close()
			return sdk.StreamStateHandle{}, ctx.Err()
		}
	}
	return s.CheckpointStateOutputStream.CloseAndGetHandle(ctx)
}

type probeMetadata struct {
	sdk.MetadataOutputStream
	l *probeLocation
}

// CloseAndFinalize records the completion, with the time it is finalized: before the
// coordinator notes the completion itself.
func (m *probeMetadata) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	done, err := m.MetadataOutputStream.CloseAndFinalize(ctx)
	if err == nil {
		m.l.p.record("complete", m.l.id, time.Now())
	}
	return done, err
}

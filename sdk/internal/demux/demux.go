// Package demux is the one stream demultiplexer of Flowstate's plugin protocol: on a
// bidirectional stream whose answers come back in their own order, it hands each answer
// to the call waiting for it. Both ends use it: the plugin end (sdk/server) for the host's
// answers during a restore and a snapshot write, the host end (sdk/internal/client) for
// the plugin's answers on a keyed backend's pipeline.
//
// It knows neither the sdk's types nor the protocol's messages, and must never import
// anything of the SDK.
package demux

import (
	"context"
	"sync"
)

// Demux delivers the messages received on one stream to the calls waiting for them. Each
// message answers under a key (a read, a state stream, or one key for a stream answered
// in order), and goes to the oldest call still waiting under that key; a message nobody
// waits for is dropped. Once the stream ends, the calls still waiting fail with its
// error.
type Demux[M any] struct {
	mu      sync.Mutex
	waiting map[uint64][]chan M // per key, oldest first
	done    chan struct{}       // closed when Receive returns
	err     error               // why the stream ended; set before done closes
}

// New returns a Demux; Receive runs it.
func New[M any]() *Demux[M] {
	return &Demux[M]{waiting: map[uint64][]chan M{}, done: make(chan struct{})}
}

// Receive receives messages with recv until it fails, and delivers each that key says
// answers a call (ok) to the oldest call waiting under its key. When recv fails, ended
// turns its error into the error of the calls still waiting (for example, io.EOF into a
// sentence); then Done is closed. Run it on a goroutine of its own, once.
func (d *Demux[M]) Receive(recv func() (M, error), key func(M) (k uint64, ok bool), ended func(error) error) {
	defer close(d.done)
	for {
		m, err := recv()
		if err != nil {
			d.mu.Lock()
			d.err = ended(err)
			d.mu.Unlock()
			return
		}
		if k, ok := key(m); ok {
			d.deliver(k, m)
		}
	}
}

// deliver hands m to the oldest call waiting under k.
func (d *Demux[M]) deliver(k uint64, m M) {
	d.mu.Lock()
	var ch chan M
	if q := d.waiting[k]; len(q) > 0 {
		ch = q[0]
		if len(q) == 1 {
			delete(d.waiting, k)
		} else {
			q[0] = nil
			d.waiting[k] = q[1:]
		}
	}
	d.mu.Unlock()
	if ch != nil {
		ch <- m // buffered: never blocks
	}
}

// Done is closed when the stream has ended.
func (d *Demux[M]) Done() <-chan struct{} { return d.done }

// Err returns why the stream ended, or nil while it has not.
func (d *Demux[M]) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Call is a call waiting for one answer.
type Call[M any] struct {
	d   *Demux[M]
	key uint64
	ch  chan M
}

// Expect registers a call that waits for the next answer under key, behind the calls
// already waiting under it. Register it before sending its request, so that the answer
// finds it.
func (d *Demux[M]) Expect(key uint64) Call[M] {
	ch := make(chan M, 1)
	d.mu.Lock()
	d.waiting[key] = append(d.waiting[key], ch)
	d.mu.Unlock()
	return Call[M]{d: d, key: key, ch: ch}
}

// Wait returns the call's answer; ctx's error when ctx ends first (the call stays
// registered, so the answers behind it still go to their calls); or the stream's error
// when it ended without answering the call.
func (c Call[M]) Wait(ctx context.Context) (M, error) {
	select {
	case m := <-c.ch:
		return m, nil
	case <-ctx.Done():
		var zero M
		return zero, ctx.Err()
	case <-c.d.done:
		select {
		case m := <-c.ch: // answered just before the end
			return m, nil
		default:
			var zero M
			return zero, c.d.Err()
		}
	}
}

// Forget withdraws a call whose request was never sent, or whose answer nobody will read
// and whose key gets no other answer: an answer that comes anyway is dropped.
func (c Call[M]) Forget() {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	q := c.d.waiting[c.key]
	for i, ch := range q {
		if ch == c.ch {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(c.d.waiting, c.key)
	} else {
		c.d.waiting[c.key] = q
	}
}

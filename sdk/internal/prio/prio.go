// Package prio provides a mutual exclusion lock whose urgent waiters go first: both ends
// keep a keyed backend's calls one at a time with it (sdk/server for a served backend,
// sdk/host's LocalPipeline for one in the host's process), a Get before queued writes.
//
// It imports only the standard library, never anything of the SDK.
package prio

import "sync"

// Mutex is a mutual exclusion lock. When it is unlocked, a goroutine waiting in
// LockUrgent gets it before any waiting in Lock. Flowstate serializes the calls into one
// keyed state backend with it: a read that a subtask waits for goes before queued writes,
// which nobody waits for yet. The zero Mutex is unlocked; a Mutex must not be copied.
type Mutex struct {
	mu     sync.Mutex
	cond   sync.Cond
	held   bool
	urgent int           // goroutines in LockUrgent
	queued int           // goroutines waiting in Lock
	watch  chan struct{} // closed when a goroutine starts to wait; see AwaitWaiters
}

// Lock locks m, after every goroutine already waiting in LockUrgent.
func (m *Mutex) Lock() { m.lock(false) }

// LockUrgent locks m, before every goroutine waiting in Lock.
func (m *Mutex) LockUrgent() { m.lock(true) }

func (m *Mutex) lock(urgent bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cond.L == nil {
		m.cond.L = &m.mu
	}
	if urgent {
		m.urgent++
		defer func() { m.urgent-- }()
	}
	if m.held || (!urgent && m.urgent > 0) {
		if !urgent {
			m.queued++
			defer func() { m.queued-- }()
		}
		if m.watch != nil {
			close(m.watch)
			m.watch = nil
		}
		for m.held || (!urgent && m.urgent > 0) {
			m.cond.Wait()
		}
	}
	m.held = true
}

// Unlock unlocks m. It is a run-time error if m is not locked.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		panic("prio: unlock of unlocked Mutex")
	}
	m.held = false
	m.cond.Broadcast()
}

// AwaitWaiters returns once at least urgent goroutines wait in LockUrgent and queued in
// Lock: tests use it to know a goroutine is waiting before they let it go.
func (m *Mutex) AwaitWaiters(urgent, queued int) {
	m.mu.Lock()
	for m.urgent < urgent || m.queued < queued {
		if m.watch == nil {
			m.watch = make(chan struct{})
		}
		ch := m.watch
		m.mu.Unlock()
		<-ch
		m.mu.Lock()
	}
	m.mu.Unlock()
}

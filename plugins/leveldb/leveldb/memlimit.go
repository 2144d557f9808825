package leveldb

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// Memory limit of the plugin's process (option memory-limit).
//
// A keyed backend's memory is its block cache and its memtables: goleveldb keeps up to two
// (the one being written and the one being flushed, or kept for reuse once flushed), each
// holding write-buffer-size bytes of keys and values plus a skiplist node of 32-64 bytes
// per entry, about as much again for the small entries of keyed state. So a keyed backend
// lives in block-cache-size + 4 x write-buffer-size. Go's collector, left to its default
// pacing (GOGC=100), lets the heap grow to twice that before it collects; the plugin's
// process therefore sets Go's soft memory limit (debug.SetMemoryLimit) to that budget for
// every keyed backend it holds open, plus baseMemory, so that the collector runs before
// the process outgrows what its configuration gives it.
const (
	// baseMemory is the budget of the plugin's process besides its keyed backends: the Go
	// runtime, gRPC's buffers, compactions' and snapshots' buffers, and garbage between
	// collections.
	baseMemory = 64 << 20
	// memtables is how many write-buffer-size shares a keyed backend's memtables take.
	memtables = 4
	// autoMemoryLimit is config.memoryLimit when the limit follows the open keyed backends.
	autoMemoryLimit = -1
)

// backendBudget returns the memory a keyed backend configured by c lives in: with
// incremental checkpoints, its tracker's keys too.
func backendBudget(c config) int64 {
	n := int64(c.blockCacheSize) + memtables*int64(c.writeBufferSize)
	if c.incremental {
		n += trackedBudget(c)
	}
	return n
}

// trackedBudget is the memory an incremental keyed backend keeps the keys written since its
// last completed checkpoint in: as much as its memtables (64 MiB at the defaults). Half
// of it is the tracker's sets (tracker.limit: about 290k keys of 20 bytes at the
// defaults); the other half is for the set and the sorted list union builds from them
// when a delta is written.
func trackedBudget(c config) int64 { return memtables * int64(c.writeBufferSize) }

// processMemory keeps the Go memory limit of a plugin process that holds keyed backends
// (Backend.OwnProcess). Its zero value leaves the limit alone.
type processMemory struct {
	mu    sync.Mutex
	own   bool  // the backend runs in a process of its own, whose limit it may set
	limit int64 // the option: autoMemoryLimit, 0 (Go's own pacing) or a fixed size
	open  int64 // sum of backendBudget of the open keyed backends
}

// configure records the option's value and applies it.
func (m *processMemory) configure(limit int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.limit = limit
	m.apply()
}

// add changes the budget of the open keyed backends by delta and applies the limit.
func (m *processMemory) add(delta int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open += delta
	m.apply()
}

// apply sets the process's limit; m.mu is held. An automatic limit leaves a GOMEMLIMIT the
// process was started with alone.
func (m *processMemory) apply() {
	switch {
	case !m.own:
	case m.limit == autoMemoryLimit && os.Getenv("GOMEMLIMIT") != "":
	case m.limit == autoMemoryLimit:
		debug.SetMemoryLimit(baseMemory + m.open)
	case m.limit == 0:
		debug.SetMemoryLimit(math.MaxInt64)
	default:
		debug.SetMemoryLimit(m.limit)
	}
}

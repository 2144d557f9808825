package testwait

import (
	"bytes"
	"sync"
)

// Buffer collects what is written on its own time, a process's output or a logger's lines,
// for a test to read while the writing goes on (and to wait on with For): a bytes.Buffer
// safe for concurrent use. The zero value is an empty Buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

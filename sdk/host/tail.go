package host

import (
	"bytes"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

const (
	// stderrTailLines is how many of the last stderr lines errors quote.
	stderrTailLines = 10
	// maxLineLen bounds a kept line.
	maxLineLen = 512
)

// tail keeps the last lines written to it.
type tail struct {
	mu      sync.Mutex
	max     int
	kept    []string
	partial []byte
}

func newTail(max int) *tail { return &tail{max: max} }

// Write splits p into lines and keeps the last ones.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			t.push(string(t.partial))
			t.partial = t.partial[:0]
			continue
		}
		if len(t.partial) < maxLineLen {
			t.partial = append(t.partial, b)
		}
	}
	return len(p), nil
}

func (t *tail) push(line string) {
	t.kept = append(t.kept, line)
	if len(t.kept) > t.max {
		t.kept = t.kept[len(t.kept)-t.max:]
	}
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.kept...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	return out
}

// format returns the kept lines for an error message, or "" when there are none.
func (t *tail) format() string {
	lines := t.lines()
	if len(lines) == 0 {
		return ""
	}
	return "; last stderr lines:\n  " + strings.Join(lines, "\n  ")
}

// lineLogger logs each line written to it: what a plugin writes to os.Stdout or
// os.Stderr once it serves.
type lineLogger struct {
	mu    sync.Mutex
	l     hclog.Logger
	level hclog.Level
	buf   []byte
}

func newLineLogger(l hclog.Logger, level hclog.Level) *lineLogger {
	return &lineLogger{l: l, level: level}
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.l.Log(w.level, string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.l.Log(w.level, string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

package progress

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// logLines parses the JSON lines an hclog logger wrote.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestLogLinesWithoutTerminal: off a terminal, a line every interval says the bytes done
// and the total, and Finish says the operation is done.
func TestLogLinesWithoutTerminal(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Info})
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	const total = 10 << 20
	var out bytes.Buffer // not a terminal
	p := New(Options{Title: "restore", Total: total, Out: &out, Logger: log, Interval: 5 * time.Second, Clock: clock.Now})

	// 1 MiB per second for 10 s, in 256 KiB steps.
	var want []int64 // the bytes done each time a line is due
	var done int64
	var sinceLine time.Duration
	for range 40 {
		clock.Advance(250 * time.Millisecond)
		sinceLine += 250 * time.Millisecond
		p.Add(256 << 10)
		done += 256 << 10
		if sinceLine >= 5*time.Second {
			want = append(want, done)
			sinceLine = 0
		}
	}
	p.Finish(nil)
	p.Finish(errors.New("ignored: already finished"))

	if out.Len() != 0 {
		t.Errorf("no bar is drawn off a terminal, got %q", out.String())
	}
	lines := logLines(t, &buf)
	if len(lines) != len(want)+1 {
		t.Fatalf("%d log lines, want %d progress lines and a final one:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		l := lines[i]
		if got := int64(l["bytes"].(float64)); got != w {
			t.Errorf("line %d: bytes %d, want %d", i, got, w)
		}
		if got := int64(l["total"].(float64)); got != total {
			t.Errorf("line %d: total %d, want %d", i, got, total)
		}
		msg := l["@message"].(string)
		if wantMsg := fmt.Sprintf("restore: %s of %s (%d%%)", Bytes(w), Bytes(total), w*100/total); msg != wantMsg {
			t.Errorf("line %d: %q, want %q", i, msg, wantMsg)
		}
	}
	final := lines[len(lines)-1]["@message"].(string)
	if wantMsg := fmt.Sprintf("restore: done, %s in 10s", Bytes(total)); final != wantMsg {
		t.Errorf("final line %q, want %q", final, wantMsg)
	}
	if d, tot := p.Bytes(); d != total || tot != total {
		t.Errorf("Bytes() = %d, %d; want %d, %d", d, tot, total, total)
	}
}

// TestFinishWithError: a failed operation says how far it got and why.
func TestFinishWithError(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true})
	p := New(Options{Title: "savepoint", Logger: log, Out: io.Discard})
	p.Add(3000)
	p.SetTotal(8000)
	p.Finish(errors.New("storage full"))
	lines := logLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("want one line, got %s", buf.String())
	}
	msg := lines[0]["@message"].(string)
	if want := "savepoint failed after " + Bytes(3000) + " of " + Bytes(8000) + " (37%)"; msg != want || lines[0]["error"] != "storage full" {
		t.Errorf("line %v, want %q with error storage full", lines[0], want)
	}
}

// TestReaderWriterCount: the wrappers pass the bytes through unchanged and count each.
func TestReaderWriterCount(t *testing.T) {
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	p := New(Options{Title: "copy", Out: io.Discard, Total: int64(2 * len(data))})
	var dst bytes.Buffer
	n, err := io.Copy(p.Writer(&dst), p.Reader(bytes.NewReader(data)))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("copy: %d, %v", n, err)
	}
	if !bytes.Equal(dst.Bytes(), data) {
		t.Fatal("the wrappers changed the bytes")
	}
	if done, _ := p.Bytes(); done != int64(2*len(data)) {
		t.Errorf("counted %d bytes, want %d (read and written)", done, 2*len(data))
	}
}

// TestConcurrentAdds: streams count into one Progress at once.
func TestConcurrentAdds(t *testing.T) {
	p := New(Options{Title: "upload", Out: io.Discard, Interval: time.Nanosecond})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 1000 {
				p.Add(int64(i + 1))
			}
		})
	}
	wg.Wait()
	p.Finish(nil)
	if done, _ := p.Bytes(); done != 1000*(1+2+3+4+5+6+7+8) {
		t.Errorf("counted %d, want %d", done, 1000*36)
	}
}

// TestBarMode draws the bar into a buffer, as it would on a terminal.
func TestBarMode(t *testing.T) {
	var out bytes.Buffer
	p := New(Options{Title: "stop --savepoint", Total: 4 << 20, Mode: Bar, Out: &out})
	for range 4 {
		p.Add(1 << 20)
	}
	p.Finish(nil)
	s := out.String()
	for _, want := range []string{"stop --savepoint", "100%", "4.0 MiB"} {
		if !strings.Contains(s, want) {
			t.Errorf("bar output %q lacks %q", s, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 40 << 20: "40.0 MiB", 3 << 40: "3.0 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

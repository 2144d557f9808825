package progress

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestCountdownLogs: off a terminal, a countdown logs the time left at once and every
// interval, less each time, and returns once its time has passed, not before.
func TestCountdownLogs(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Info})
	const d = 1500 * time.Millisecond
	start := time.Now()
	if err := Countdown(context.Background(), Options{Title: "lease expires", Out: &bytes.Buffer{}, Logger: log, Interval: 400 * time.Millisecond}, d); err != nil {
		t.Fatalf("Countdown = %v", err)
	}
	if elapsed := time.Since(start); elapsed < d {
		t.Fatalf("Countdown returned after %s, before its %s", elapsed, d)
	}
	lines := logLines(t, &buf)
	if len(lines) < 2 || lines[0]["@message"] != "lease expires: 2s left of 2s" {
		t.Fatalf("lines = %v; want at least two, the first %q", lines, "lease expires: 2s left of 2s")
	}
	prev := d + time.Second
	for _, l := range lines {
		left, err := time.ParseDuration(l["left"].(string))
		if err != nil || left >= prev || !strings.HasPrefix(l["@message"].(string), "lease expires: ") {
			t.Fatalf("line %v: want less time left than %s before it", l, prev)
		}
		prev = left
	}
}

// TestCountdownEndsWithItsContext: a countdown whose context ends returns its error at
// once; with a bar, the bar shows the title.
func TestCountdownEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out bytes.Buffer
	start := time.Now()
	err := Countdown(ctx, Options{Title: "lease expires", Mode: Bar, Out: &out}, time.Hour)
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Minute {
		t.Fatalf("Countdown = %v after %s; want context.Canceled at once", err, time.Since(start))
	}
	if !strings.Contains(out.String(), "lease expires: ") {
		t.Fatalf("the bar %q does not show the title", out.String())
	}
}

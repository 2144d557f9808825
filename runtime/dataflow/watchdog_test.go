package dataflow

import (
	"sync"
	"testing"
	"time"
)

func TestWatchdogFiresUntilStopped(t *testing.T) {
	var mu sync.Mutex
	var fired []int
	w := &watchdog{every: 20 * time.Millisecond, fire: func(n int) {
		mu.Lock()
		fired = append(fired, n)
		mu.Unlock()
	}}
	w.start()
	time.Sleep(70 * time.Millisecond)
	w.stop()
	mu.Lock()
	got := append([]int(nil), fired...)
	mu.Unlock()
	if len(got) < 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("fired %v, want 1, 2, ...", got)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(fired) != len(got) {
		t.Fatalf("fired %v after stop (had %v)", fired, got)
	}
}

func TestWatchdogDisabled(t *testing.T) {
	w := &watchdog{every: 0, fire: func(int) { t.Error("a disabled watchdog fired") }}
	w.start()
	time.Sleep(10 * time.Millisecond)
	w.stop()
	w = &watchdog{every: time.Millisecond}
	w.start() // no fire func: nothing to call
	w.stop()
}

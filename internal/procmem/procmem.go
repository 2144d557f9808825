// Package procmem samples the peak resident memory (VmHWM in /proc/PID/status) and the CPU
// time (/proc/PID/stat) of a process and of the processes it starts, such as a runner and
// its plugins, for the memory and CPU figures of flowbench and the tests that bound them.
// It reads Linux's /proc.
//
// It imports only the standard library, nothing of this repository: it measures processes
// from the outside and knows nothing of what they run.
package procmem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Peak is the peak resident memory of one process, and its CPU time at the last sample.
type Peak struct {
	PID   int
	Name  string // base name of the executable
	Bytes int64  // VmHWM: the most memory the process ever had resident
	// CPU is the user and system time the process had used at the last sample that saw it
	// (its own, not its children's): like VmHWM it only grows, so it misses only what the
	// process used within an interval of its exit.
	CPU time.Duration
}

// Watcher samples the peak resident memory and the CPU time of a process and its children
// until stopped.
type Watcher struct {
	root  int
	every time.Duration
	stop  chan struct{}
	done  chan struct{}

	mu    sync.Mutex
	peaks map[int]Peak
}

// Watch starts sampling process pid and its children (the children of its children too)
// every interval. VmHWM only grows, so a sample misses only what a process gained within
// an interval of its exit.
func Watch(pid int, every time.Duration) *Watcher {
	w := &Watcher{root: pid, every: every, stop: make(chan struct{}), done: make(chan struct{}), peaks: map[int]Peak{}}
	go w.loop()
	return w
}

func (w *Watcher) loop() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		w.sample()
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// sample reads VmHWM and the CPU time of the root and of every descendant alive.
func (w *Watcher) sample() {
	for _, pid := range tree(w.root) {
		p, ok := read(pid)
		if !ok {
			continue
		}
		w.mu.Lock()
		if old, seen := w.peaks[pid]; seen {
			p.Bytes, p.CPU = max(p.Bytes, old.Bytes), max(p.CPU, old.CPU)
		}
		w.peaks[pid] = p
		w.mu.Unlock()
	}
}

// Stop takes a last sample, stops sampling and returns the peak (and the CPU time) of
// every process seen, ordered by name, then pid.
func (w *Watcher) Stop() []Peak {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Peak, 0, len(w.peaks))
	for _, p := range w.peaks {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Peak) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return a.PID - b.PID
	})
	return out
}

// Max returns the largest peak among peaks of processes named name, and whether there was
// one.
func Max(peaks []Peak, name string) (int64, bool) {
	var n int64
	found := false
	for _, p := range peaks {
		if p.Name == name {
			n, found = max(n, p.Bytes), true
		}
	}
	return n, found
}

// tree returns pid and its descendants alive, from the children lists of every thread.
func tree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		files, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(out[i]), "task", "*", "children"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, s := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(s); err == nil && !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// read returns the name, VmHWM and CPU time of process pid; false when it is gone or a
// zombie (whose status has no VmHWM).
func read(pid int) (Peak, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	exe, err := os.Readlink(filepath.Join(dir, "exe"))
	if err != nil {
		return Peak{}, false
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return Peak{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return Peak{}, false
		}
		cpu, ok := CPU(pid)
		if !ok {
			return Peak{}, false
		}
		return Peak{PID: pid, Name: filepath.Base(strings.TrimSuffix(exe, " (deleted)")), Bytes: kb << 10, CPU: cpu}, true
	}
	return Peak{}, false
}

// clockTicks is USER_HZ, the unit of the times in /proc/PID/stat (100 on Linux).
const clockTicks = 100

// CPU returns the user and system time process pid has used so far, its own (not its
// children's), from /proc/PID/stat; false when the process is gone.
func CPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid ...: utime and stime are fields 14 and 15, the 12th and 13th
	// after the command's closing parenthesis (the command may hold spaces and parentheses).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * time.Second / clockTicks, true
}

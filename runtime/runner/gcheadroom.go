package runner

import (
	"fmt"
	"sync"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// machineMemory is dataflow.MachineMemory; tests replace it.
var machineMemory = dataflow.MachineMemory

// applyGCHeadroom sets the process's GC headroom from cfg (runner.memory.gc-headroom). The
// default shrinks to a quarter of the memory the machine can still spare when that is
// less, so that a small machine or container runs with the defaults; a headroom the
// configuration sets is refused above half of it, naming the key.
func applyGCHeadroom(cfg *config.Config) error {
	n := cfg.Memory.GCHeadroom
	if !cfg.IsSet(config.KeyGCHeadroom) {
		if have, _ := machineMemory(); have > 0 {
			n = min(n, have/4)
		}
	}
	if err := SetGCHeadroom(n); err != nil {
		return fmt.Errorf("%s: %w", cfg.Locate(config.KeyGCHeadroom), err)
	}
	return nil
}

// headroom is the reserve SetGCHeadroom keeps on the heap.
var headroom struct {
	sync.Mutex
	reserve []byte
}

// SetGCHeadroom lets the process's heap gather n more bytes of garbage before the garbage
// collector runs (runner.memory.gc-headroom): with GOGC=100 the collector then runs once
// the heap has grown by the live data plus n, rather than by the live data alone (in
// general, by GOGC percent of both).
//
// It keeps an n-byte allocation that nothing writes and that holds no pointers (a
// "ballast"): the collector counts it as live heap but never scans it, and the operating
// system backs only the pages written with memory, none of these when they come from
// memory the process has not used before, as early in a run. So the process uses at most
// about GOGC percent of n more, in the garbage it lets gather. A headroom above half the
// memory the machine can still spare (dataflow.MachineMemory) is refused.
//
// Go's own pacing starts collecting at a 4 MB heap. A runner whose keyed state lives in
// plugin processes holds little more than its state cache, so while that cache fills it
// collects several times in its first tenth of a second and every few hundred
// milliseconds after; an in-process backend's buffers would have grown the heap and
// spaced those collections out. n = 0 removes the reserve. Calls with the size already
// set do nothing.
func SetGCHeadroom(n int64) error {
	headroom.Lock()
	defer headroom.Unlock()
	if int64(len(headroom.reserve)) == n {
		return nil
	}
	if have, from := machineMemory(); n > 0 && have > 0 && n > have/2 {
		return fmt.Errorf("a GC headroom of %d MiB exceeds half the memory this process may still take (%d MiB, %s): the garbage it lets gather needs that memory", n>>20, have>>20, from)
	}
	headroom.reserve = nil
	if n > 0 {
		headroom.reserve = make([]byte, n)
	}
	return nil
}

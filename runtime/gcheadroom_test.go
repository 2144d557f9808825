package runtime

import (
	goruntime "runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// heapGoal is the heap size at which the next collection ends, after a full one now.
func heapGoal() uint64 {
	goruntime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGCHeadroomMovesTheHeapGoal: with a headroom of n bytes the collector lets the heap
// grow at least n bytes further before it collects; without, it goes back to Go's pacing.
func TestGCHeadroomMovesTheHeapGoal(t *testing.T) {
	set := func(n int64) {
		t.Helper()
		if err := SetGCHeadroom(n); err != nil {
			t.Fatal(err)
		}
	}
	defer set(0)
	set(0)
	before := heapGoal()
	const n = 256 << 20
	set(n)
	if with := heapGoal(); with < before+n {
		t.Fatalf("heap goal %d MiB with a %d MiB headroom, %d MiB without: want at least the headroom more", with>>20, n>>20, before>>20)
	}
	set(0)
	if after := heapGoal(); after >= before+n {
		t.Fatalf("heap goal %d MiB once the headroom is gone, %d MiB before it", after>>20, before>>20)
	}
}

// TestGCHeadroomAboveWhatTheMachineSparesIsRefused: the garbage a headroom lets gather
// takes real memory, so one above half of what the machine can spare fails, saying so,
// and keeps the headroom set before.
func TestGCHeadroomAboveWhatTheMachineSparesIsRefused(t *testing.T) {
	have, from := dataflow.MachineMemory()
	if have <= 0 {
		t.Fatalf("no figure of the memory this process may take (%q): the refusal cannot be checked", from)
	}
	defer SetGCHeadroom(0)
	if err := SetGCHeadroom(1 << 20); err != nil {
		t.Fatal(err)
	}
	err := SetGCHeadroom(have/2 + 1<<30)
	if err == nil || !strings.Contains(err.Error(), "exceeds half the memory") || !strings.Contains(err.Error(), from) {
		t.Fatalf("SetGCHeadroom above half of %d MiB (%s): %v; want a refusal naming the figure", have>>20, from, err)
	}
	if got := len(headroom.reserve); got != 1<<20 {
		t.Fatalf("after the refusal the reserve is %d bytes, want the 1 MiB set before", got)
	}
}

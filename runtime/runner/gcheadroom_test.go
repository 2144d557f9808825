package runner

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
)

// heapGoal is the heap size at which the next collection ends, after a full one now.
func heapGoal() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGCHeadroomMovesTheHeapGoal: with a headroom of n bytes the collector lets the heap
// grow at least n bytes further before it collects; without, it goes back to Go's pacing.
func TestGCHeadroomMovesTheHeapGoal(t *testing.T) {
	spare(t, 8<<30)
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

// spare makes machineMemory answer n bytes for the rest of t.
func spare(t *testing.T, n int64) {
	prev := machineMemory
	machineMemory = func() (int64, string) { return n, "set by the test" }
	t.Cleanup(func() { machineMemory = prev })
}

// TestGCHeadroomAboveWhatTheMachineSparesIsRefused: the garbage a headroom lets gather
// takes real memory, so one above half of what the machine can spare fails, saying so,
// and keeps the headroom set before.
func TestGCHeadroomAboveWhatTheMachineSparesIsRefused(t *testing.T) {
	spare(t, 1<<30)
	defer SetGCHeadroom(0)
	if err := SetGCHeadroom(1 << 20); err != nil {
		t.Fatal(err)
	}
	err := SetGCHeadroom(600 << 20)
	if err == nil || !strings.Contains(err.Error(), "exceeds half the memory") || !strings.Contains(err.Error(), "set by the test") {
		t.Fatalf("SetGCHeadroom(600 MiB) with 1 GiB to spare: %v; want a refusal naming the figure", err)
	}
	if got := len(headroom.reserve); got != 1<<20 {
		t.Fatalf("after the refusal the reserve is %d bytes, want the 1 MiB set before", got)
	}
}

// TestGCHeadroomFromTheConfiguration: unset, the headroom is the default, or a quarter of
// what the machine can spare when that is less; set, it is the value, and one the machine
// cannot spare fails naming the key where the file sets it.
func TestGCHeadroomFromTheConfiguration(t *testing.T) {
	defer SetGCHeadroom(0)
	parse := func(yaml string) *config.Config {
		t.Helper()
		c, err := config.Parse([]byte(yaml), "runner.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		name  string
		yaml  string
		spare int64
		want  int64
	}{
		{"default", "job.name: x\n", 8 << 30, config.DefaultGCHeadroom},
		{"default on a small machine", "job.name: x\n", 100 << 20, 25 << 20},
		{"set", "runner.memory.gc-headroom: 40mb\n", 100 << 20, 40 << 20},
		{"off", "runner.memory.gc-headroom: 0\n", 8 << 30, 0},
	} {
		spare(t, c.spare)
		if err := applyGCHeadroom(parse(c.yaml)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := int64(len(headroom.reserve)); got != c.want {
			t.Errorf("%s: headroom %d bytes, want %d", c.name, got, c.want)
		}
	}
	spare(t, 100<<20)
	err := applyGCHeadroom(parse("job.name: x\nrunner.memory.gc-headroom: 64mb\n"))
	if err == nil || !strings.Contains(err.Error(), "runner.yaml:2: runner.memory.gc-headroom") {
		t.Fatalf("a set headroom of 64 MiB with 100 MiB to spare: %v; want an error naming runner.yaml:2 and the key", err)
	}
}

package runner

import (
	"math"
	"runtime"
	"runtime/debug"
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

// spare makes machineMemory answer n bytes for the rest of t.
func spare(t *testing.T, n int64) {
	prev := machineMemory
	machineMemory = func() (int64, string) { return n, "set by the test" }
	t.Cleanup(func() { machineMemory = prev })
}

// keepGC restores the test process's collector settings when t ends, and clears GOGC and
// GOMEMLIMIT for it.
func keepGC(t *testing.T) {
	limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	t.Cleanup(func() { debug.SetMemoryLimit(limit); debug.SetGCPercent(percent) })
}

// current reads the process's collector settings back from Go's runtime.
func current() (limit int64, percent int) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return debug.SetMemoryLimit(-1), percent
}

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(yaml), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestApplyMemorySetsGosKnobs: each runner.memory.* setting reaches Go's runtime as the
// limit and percent it names, the defaults follow the machine, and the collector's heap
// goal follows the limit.
func TestApplyMemorySetsGosKnobs(t *testing.T) {
	for _, tc := range []struct {
		name, yaml  string
		spare       int64
		wantLimit   int64 // in Go's terms: math.MaxInt64 is no limit
		wantPercent int
	}{
		{"defaults", "", 8 << 30, 256 << 20, -1},
		{"defaults on a small machine", "", 200 << 20, 100 << 20, -1},
		{"a limit and a percent", "runner.memory.limit: 1gb\nrunner.memory.gogc: 200\n", 8 << 30, 1 << 30, 200},
		{"no limit: Go's default percent", "runner.memory.limit: 0\n", 8 << 30, math.MaxInt64, 100},
		{"machine memory unknown", "", 0, 256 << 20, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keepGC(t)
			spare(t, tc.spare)
			got, err := ApplyMemory(parse(t, tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			limit, percent := current()
			if limit != tc.wantLimit || percent != tc.wantPercent {
				t.Fatalf("Go's limit %d, percent %d; want %d, %d (ApplyMemory said %s)", limit, percent, tc.wantLimit, tc.wantPercent, got)
			}
			if tc.wantPercent == -1 {
				// With the percent off the collector's goal is the limit, less what is not heap.
				if goal := heapGoal(); goal < uint64(tc.wantLimit)/2 || goal > uint64(tc.wantLimit) {
					t.Fatalf("heap goal %d MiB under a %d MiB limit with GOGC off", goal>>20, tc.wantLimit>>20)
				}
			}
		})
	}
}

// TestApplyMemoryKeepsTheEnvironment: with the keys unset, GOMEMLIMIT and GOGC given to the
// process stand.
func TestApplyMemoryKeepsTheEnvironment(t *testing.T) {
	keepGC(t)
	spare(t, 8<<30)
	t.Setenv("GOMEMLIMIT", "123MiB")
	t.Setenv("GOGC", "300")
	debug.SetMemoryLimit(123 << 20) // what Go's runtime read from them at start
	debug.SetGCPercent(300)
	if _, err := ApplyMemory(parse(t, "")); err != nil {
		t.Fatal(err)
	}
	if limit, percent := current(); limit != 123<<20 || percent != 300 {
		t.Fatalf("limit %d MiB, percent %d: want the environment's 123 MiB and 300", limit>>20, percent)
	}
}

// TestApplyMemoryRefusesByKey: a limit the machine cannot give, and a percent off with no
// limit, fail naming the keys and change nothing.
func TestApplyMemoryRefusesByKey(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"limit over the machine", "runner.memory.limit: 4gb\n", "config.yaml:1: runner.memory.limit: a memory limit of 4096 MiB exceeds"},
		{"off without a limit", "runner.memory.limit: 0\nrunner.memory.gogc: off\n", "config.yaml:2: runner.memory.gogc: off with no memory limit (config.yaml:1: runner.memory.limit)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keepGC(t)
			spare(t, 1<<30)
			before, beforePercent := current()
			_, err := ApplyMemory(parse(t, tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			if limit, percent := current(); limit != before || percent != beforePercent {
				t.Fatalf("a refused setting changed the collector: limit %d, percent %d", limit, percent)
			}
		})
	}
}

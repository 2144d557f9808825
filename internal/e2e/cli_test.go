package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// TestCheckpointsListAndBadPointer runs a job to the end, lists its retained checkpoints
// as JSON, and checks that a pointer to nothing is refused with an error naming it.
func TestCheckpointsListAndBadPointer(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	s := newWordcount(t, "hashmap", "filesystem", 1<<20, 20000, nil)
	s.edit(t, map[string]any{"execution.checkpointing.num-retained": 3})
	r := s.run(t)
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
	s.check(t, r.out.String())
	out, err := runnerCmd(t, "checkpoints", "list", "--config", s.config, "--json", "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("checkpoints list --json printed %q: %v", out, err)
	}
	if len(list) != 3 {
		t.Fatalf("%d checkpoints listed, want the 3 retained: %s", len(list), out)
	}
	prev := 0.0
	for _, c := range list {
		for _, f := range []string{"id", "time", "size", "pointer"} {
			if _, ok := c[f]; !ok {
				t.Fatalf("entry %v lacks field %q", c, f)
			}
		}
		if id := c["id"].(float64); id <= prev {
			t.Fatalf("ids not increasing: %s", out)
		} else {
			prev = id
		}
		if c["size"].(float64) <= 0 {
			t.Fatalf("checkpoint %v has no size", c)
		}
		if _, err := os.Stat(c["pointer"].(string)); err != nil {
			t.Fatalf("pointer %v: %v", c["pointer"], err)
		}
	}
	bad := s.dir + "/checkpoints/wc/chk-999"
	r = s.run(t, "--from", bad)
	if err := r.wait(t, time.Minute); err == nil {
		t.Fatalf("--from %s succeeded", bad)
	}
	if !strings.Contains(r.out.String(), "chk-999") || !strings.Contains(r.out.String(), "fsstorage") {
		t.Fatalf("error does not name the pointer and the missing metadata:\n%s", r.out.String())
	}
}

var statsLine = regexp.MustCompile(`(\d+) records, \d+ checkpoints \(\d+ failed\), (\d+) state calls`)

// TestStateCallsAreBatchedThroughPlugins counts the state calls a word count makes across
// the plugin boundary: far below one per hundred records.
func TestStateCallsAreBatchedThroughPlugins(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 0, nil)
	r := s.run(t)
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, r.out.String())
	}
	m := statsLine.FindStringSubmatch(r.out.String())
	if m == nil {
		t.Fatalf("no statistics line in:\n%s", r.out.String())
	}
	records, _ := strconv.Atoi(m[1])
	calls, _ := strconv.Atoi(m[2])
	ratio := float64(calls) / float64(records)
	t.Logf("%d records, %d state RPCs: %.5f per record", records, calls, ratio)
	if records == 0 || ratio >= 0.01 {
		t.Fatalf("%.4f state RPCs per record (want < 0.01)", ratio)
	}
	s.check(t, r.out.String())
}

// TestRestartLimitStopsTheJob kills the backend with no restarts allowed: the runner stops
// with an error that says so.
func TestRestartLimitStopsTheJob(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 20000, nil)
	s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": 0})
	r := s.run(t)
	waitOutput(t, r, "checkpoint complete", time.Minute) // the job runs: past the plugins' start-up
	pid := pluginOf(r.cmd.Process.Pid, "hashmap")
	if pid == 0 {
		t.Fatalf("no backend plugin of the running job:\n%s", tail(r.out.String(), 20))
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if err := r.wait(t, time.Minute); err == nil {
		t.Fatalf("runner exited 0 though restarts were exhausted:\n%s", r.out.String())
	}
	for _, want := range []string{"hashmap", "restart-strategy.fixed-delay.attempts"} {
		if !strings.Contains(r.out.String(), want) {
			t.Fatalf("error does not mention %q:\n%s", want, tail(r.out.String(), 10))
		}
	}
}

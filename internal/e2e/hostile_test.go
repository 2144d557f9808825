package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/state"
)

// hostileRun runs a word count with the given backend from the fault plugin directory and
// returns the runner's output and exit error.
func hostileRun(t *testing.T, backend string, within time.Duration) (string, error) {
	t.Helper()
	s := newWordcount(t, backend, "filesystem", 256<<10, 0, map[string]any{"execution.checkpointing.timeout": "5s"})
	if backend == "bigmsg" {
		// A fresh job reads no state until a subtask's cache of state values has dropped a
		// generation (state.DefaultCacheEntries values each): that many distinct words,
		// three times over for each of the two subtasks, make it read, and so meet the
		// plugin's 8 MiB reply.
		writeDistinctWords(t, s.input, 6*state.DefaultCacheEntries)
	}
	s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": 1})
	r := startRunner(t, "run", "--config", s.config, "--plugin-dir", faultPluginDir(t))
	err := r.wait(t, within)
	return r.out.String(), err
}

// writeDistinctWords writes n distinct words to path, ten to a line.
func writeDistinctWords(t *testing.T, path string, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString("d" + strconv.Itoa(i))
		if i%10 == 9 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	if err := os.WriteFile(path, []byte(b.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostilePluginsGetClearErrors starts plugins that misbehave at the runner level: junk
// on stdout before the handshake, no handshake at all, an 8 MiB value in every Get reply
// (twice gRPC's default message limit).
// The runner stops within bounded time with an error naming the plugin and the problem,
// and leaves no plugin process behind.
func TestHostilePluginsGetClearErrors(t *testing.T) {
	cases := []struct {
		plugin string
		within time.Duration
		want   []string
	}{
		{"junk", 30 * time.Second, []string{"flowstate-plugin-junk", "hello, I am not a plugin"}},
		{"silent", 40 * time.Second, []string{"flowstate-plugin-silent"}},
		{"bigmsg", time.Minute, []string{"bigmsg", "8388608 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.plugin, func(t *testing.T) {
			start := time.Now()
			out, err := hostileRun(t, c.plugin, c.within)
			if err == nil {
				t.Fatalf("the runner succeeded with plugin %s:\n%s", c.plugin, tail(out, 20))
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Fatalf("error does not mention %q:\n%s", w, tail(out, 20))
				}
			}
			if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
				t.Fatalf("the runner crashed:\n%s", tail(out, 40))
			}
			if left := processes("flowstate-plugin-" + c.plugin); len(left) > 0 {
				waitGone(t, []int{left[0].pid}, 5*time.Second)
			}
			t.Logf("refused in %s: %s", time.Since(start).Round(time.Millisecond), lastLine(out))
		})
	}
}

// TestNoisyPluginDoesNotHurtTheRunner uses a state backend that floods stderr (4 MB before
// its handshake, a log line every millisecond after): the job completes with exact output.
func TestNoisyPluginDoesNotHurtTheRunner(t *testing.T) {
	s := newWordcount(t, "noisy", "filesystem", 512<<10, 0, nil)
	s.runWith(t, faultPluginDir(t), time.Minute)
}

// TestPathTraversalRefused gives the runner a job name, a plugin name and a pointer that
// try to leave their directories: each is refused with an error naming it, and nothing is
// created outside the test's directory.
func TestPathTraversalRefused(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	cases := []struct {
		name, want string
		edit       map[string]any
		args       []string
	}{
		{"job-name", `job.name: bad value "../../outside"`, map[string]any{"job.name": "../../outside"}, nil},
		{"job-name-slash", `job.name: bad value "a/b"`, map[string]any{"job.name": "a/b"}, nil},
		{"backend-name", `"../../bin/sh"`, map[string]any{"state.backend.type": "../../bin/sh"}, nil},
		{"storage-name", `"../fsstorage"`, map[string]any{"execution.checkpointing.storage": "../fsstorage"}, nil},
		{"pointer", "is a file but not a checkpoint metadata file", nil, []string{"--from", "file:///etc/../etc/passwd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
			s.edit(t, c.edit)
			r := s.run(t, c.args...)
			if err := r.wait(t, 30*time.Second); err == nil {
				t.Fatalf("the runner accepted it:\n%s", tail(r.out.String(), 20))
			}
			if !strings.Contains(r.out.String(), c.want) {
				t.Fatalf("error does not mention %q:\n%s", c.want, tail(r.out.String(), 20))
			}
			if _, err := os.Stat(outside); err == nil {
				t.Fatalf("%s was created", outside)
			}
			t.Logf("refused: %s", lastLine(r.out.String()))
		})
	}
}

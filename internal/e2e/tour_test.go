package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testwait"
)

// The README's tour runs examples/tour/config.yaml with these, which the test moves into
// its own directory and onto a free port.
const (
	tourConfig = "examples/tour/config.yaml"
	tourDir    = "/tmp/flowstate-examples/tour"
	tourAddr   = "127.0.0.1:8081"
	tourLog    = "tour.log"
)

var (
	// tourBackground is a tour line that starts a runner in the background, its log in
	// tour.log.
	tourBackground = regexp.MustCompile(`^(bin/runner run .*) > tour\.log 2>&1 &$`)
	// tourAssign is a tour line that keeps a command's standard output in a variable.
	tourAssign = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)=\$\((.*)\)(\s+#.*)?$`)
	// tourMust are what the tour must show, each in some line of it.
	tourMust = []string{"bin/runner run ", "bin/runner status", "curl", "bin/runner savepoint --config", "bin/runner stop",
		"bin/runner checkpoints inspect", "bin/runner checkpoints dump"}
)

// tourLines returns the shell lines of the README's tour section, in order.
func tourLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "\n## A tour\n")
	end := strings.Index(s[max(start, 0):], "\n## Layout\n")
	if start < 0 || end < 0 {
		t.Fatal(`README.md has no "## A tour" section followed by "## Layout"`)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(s[start:start+end], "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && l == "```sh"
		case in && strings.TrimSpace(l) != "":
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return lines
}

// tourRun is the tour's state: its directory, the configuration it runs, its variables and
// the runners it started.
type tourRun struct {
	dir, cfg, runner string
	vars             map[string]string
	runners          []*tourRunner
	addr, backend    string // of the latest runner
	parallelism      int
}

// TestReadmeTourRuns runs the README's tour line by line, as a user pastes it, against
// examples/tour/config.yaml moved into a temporary directory and onto a free port (pinned
// for all its runs, as the README's is): the job runs in the background, status, curl,
// savepoint, stop, inspect, verify, dump, a resume on another backend and parallelism, a
// drain, rescale-keys and dispose each succeed and say what the README says they do, and
// every runner the tour starts ends with status 0. A README line the test cannot check
// fails it, so the tour cannot drift from what runs.
func TestReadmeTourRuns(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../" + tourConfig)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if strings.Count(text, tourDir) < 3 || strings.Count(text, "port: 8081") != 1 {
		t.Fatalf("%s no longer writes under %s or pins port 8081: update this test with it:\n%s", tourConfig, tourDir, text)
	}
	text = strings.ReplaceAll(text, tourDir, dir)
	// A pinned port of its own, as the README's is: each run of the tour must find it free.
	text = strings.Replace(text, "port: 8081", "port: "+strconv.Itoa(freePort(t)), 1)
	tr := &tourRun{dir: dir, cfg: filepath.Join(dir, "config.yaml"), runner: testbin.Runner(t), vars: map[string]string{}}
	if err := os.WriteFile(tr.cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil { // TMPDIR: leveldb's default localdir
		t.Fatal(err)
	}
	t.Cleanup(tr.kill)

	lines := tourLines(t)
	seen := map[string]bool{}
	for _, line := range lines {
		for _, what := range tourMust {
			if strings.Contains(line, what) {
				seen[what] = true
			}
		}
		if m := tourBackground.FindStringSubmatch(line); m != nil {
			tr.start(t, m[1])
			continue
		}
		name, cmd := "", line
		if m := tourAssign.FindStringSubmatch(line); m != nil {
			name, cmd = m[1], m[2]
		}
		out := tr.shell(t, cmd)
		if name != "" {
			tr.vars[name] = strings.TrimSpace(out)
		}
		tr.check(t, line, out)
	}
	for _, what := range tourMust {
		if !seen[what] {
			t.Errorf("the README's tour has no %q line", what)
		}
	}
	for i, r := range tr.runners {
		select {
		case <-r.exited:
			if r.err != nil {
				t.Errorf("runner %d of the tour (%s) ended with %v", i+1, r.line, r.err)
			}
		case <-time.After(time.Minute):
			t.Errorf("runner %d of the tour (%s) still runs after the tour ended: the README leaves it running", i+1, r.line)
		}
	}
}

// tourRunner is a runner the tour started in the background.
type tourRunner struct {
	line   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once err is set
	err    error
}

// expand puts the test's paths and address in place of the README's in a tour line.
func (tr *tourRun) expand(line string) string {
	line = strings.ReplaceAll(line, "bin/runner ", tr.runner+" ")
	line = strings.ReplaceAll(line, tourConfig, tr.cfg)
	line = strings.ReplaceAll(line, tourAddr, tr.addr)
	return line
}

// env is the environment of the tour's commands: the variables it set, and a temporary
// directory of the test's own.
func (tr *tourRun) env() []string {
	env := append(os.Environ(), "TMPDIR="+filepath.Join(tr.dir, "tmp"))
	for k, v := range tr.vars {
		env = append(env, k+"="+v)
	}
	return env
}

func (tr *tourRun) log(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(tr.dir, tourLog))
	return string(b)
}

// start runs a tour line's runner in the background, its log in the test's tour.log, and
// waits for its first completed checkpoint, as the tour does before going on.
func (tr *tourRun) start(t *testing.T, line string) {
	t.Helper()
	logFile, err := os.Create(filepath.Join(tr.dir, tourLog))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command("bash", "-c", "exec "+tr.expand(line))
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = "../..", tr.env(), logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &tourRunner{line: line, cmd: cmd, exited: make(chan struct{})}
	go func() { r.err = cmd.Wait(); close(r.exited) }()
	tr.runners = append(tr.runners, r)
	tr.backend, tr.parallelism = "hashmap", 2
	if m := regexp.MustCompile(`-D state\.backend\.type=(\w+)`).FindStringSubmatch(line); m != nil {
		tr.backend = m[1]
	}
	if m := regexp.MustCompile(` -p (\d+)`).FindStringSubmatch(line); m != nil {
		tr.parallelism, _ = strconv.Atoi(m[1])
	}
	testwait.For(t, fmt.Sprintf("tour line %q: its control endpoint and first completed checkpoint", line), time.Minute, func() error {
		ended := r.ended() // first: once the runner has ended, the log read next is all of it
		log := tr.log(t)
		if m := endpointLine.FindStringSubmatch(log); m != nil && strings.Contains(log, "checkpoint complete") {
			tr.addr = m[1]
			return nil
		}
		err := fmt.Errorf("not in its log:\n%s", tail(log, 20))
		if ended {
			return testwait.Stop(fmt.Errorf("the runner ended (%v); %w", r.err, err))
		}
		return err
	})
}

// ended reports whether the runner has ended.
func (r *tourRunner) ended() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// shell runs a tour line with bash (pipefail: every command of a pipe must succeed) from
// the repository's root and returns its standard output; the line must succeed.
func (tr *tourRun) shell(t *testing.T, line string) string {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", tr.expand(line))
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = "../..", tr.env(), &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tour line %q: %v\nstdout:\n%s\nstderr:\n%s\nrunner log:\n%s", line, err, stdout.String(), stderr.String(), tail(tr.log(t), 20))
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("tour line %q did not end within a minute:\n%s%s", line, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// kill ends the runners the tour left running (a failed test's).
func (tr *tourRun) kill() {
	for _, r := range tr.runners {
		select {
		case <-r.exited:
		default:
			r.cmd.Process.Kill()
			<-r.exited
		}
	}
}

// check says whether a tour line's output is what the README says it is; a line it has no
// check for fails the test.
func (tr *tourRun) check(t *testing.T, line, out string) {
	t.Helper()
	fail := func(what string) {
		t.Helper()
		t.Fatalf("tour line %q: %s; its output:\n%s", line, what, out)
	}
	savepoints := filepath.Join(tr.dir, "savepoints") + string(filepath.Separator)
	isSavepoint := func(p string) bool {
		_, err := os.Stat(filepath.Join(p, "_metadata"))
		return strings.HasPrefix(p, savepoints) && err == nil
	}
	switch {
	case strings.Contains(line, "bin/runner plugins list"):
		for _, p := range testbin.Plugins {
			if !strings.Contains(out, "flowstate-plugin-"+p) {
				fail("plugin " + p + " is not listed")
			}
		}
	case strings.Contains(line, "bin/runner config explain"):
		if !strings.Contains(out, "Working state (state backend: leveldb") {
			fail("no explanation of the working state")
		}
	case strings.Contains(line, "bin/runner status"):
		if !strings.Contains(out, "job tour: RUNNING") || !strings.Contains(out, "plugin "+tr.backend+":") {
			fail("the job is not reported running on " + tr.backend)
		}
		want := "PARALLELISM  RECORDS IN"
		if !strings.Contains(out, want) || !regexp.MustCompile(`(?m)^aggregate\s+`+strconv.Itoa(tr.parallelism)+`\s`).MatchString(out) {
			fail("the aggregate operator does not run at parallelism " + strconv.Itoa(tr.parallelism))
		}
	case strings.Contains(line, "/jobs/overview"):
		var o struct {
			Jobs []struct{ Name, State string }
		}
		if json.Unmarshal([]byte(out), &o) != nil || len(o.Jobs) != 1 || o.Jobs[0].Name != "tour" || o.Jobs[0].State != "RUNNING" {
			fail("not one running job tour")
		}
	case strings.Contains(line, "/jobs/tour/checkpoints"):
		var c struct {
			Counts struct{ Completed int }
		}
		if json.Unmarshal([]byte(out), &c) != nil || c.Counts.Completed < 1 {
			fail("no completed checkpoint counted")
		}
	case strings.Contains(line, "/metrics"):
		if v, ok := metricValue(t, out, "flowstate_job_numberOfCompletedCheckpoints", "tour"); !ok || v < 1 {
			fail("no completed checkpoint in the metrics")
		}
	case strings.Contains(line, "bin/runner checkpoints list"):
		if !strings.Contains(out, filepath.Join(tr.dir, "checkpoints", "tour", "chk-")) {
			fail("no retained checkpoint listed")
		}
	case strings.Contains(line, "--dispose"):
		if _, err := os.Stat(tr.vars["SP"]); !errors.Is(err, os.ErrNotExist) {
			fail("the savepoint " + tr.vars["SP"] + " is still there")
		}
	case strings.Contains(line, "bin/runner stop"):
		if !isSavepoint(lastLine(out)) {
			fail("its last line is not a savepoint in " + savepoints)
		}
		// stop returns once the runner has ended: the tour's next run may take the port.
		if conn, err := net.DialTimeout("tcp", tr.addr, time.Second); err == nil {
			conn.Close()
			fail("the runner still answers at " + tr.addr + " after stop returned")
		}
	case strings.Contains(line, "bin/runner savepoint"), strings.Contains(line, "bin/runner checkpoints rescale-keys"):
		if !isSavepoint(lastLine(out)) {
			fail("its last line is not a savepoint in " + savepoints)
		}
	case strings.Contains(line, "bin/runner checkpoints inspect"):
		if !regexp.MustCompile(`checkpoint \d+ of job "tour" \(aggregate\)`).MatchString(out) || !strings.Contains(out, "aggregate/sum") {
			fail("no report of job tour's state aggregate/sum")
		}
	case strings.Contains(line, "bin/runner checkpoints verify"):
		if !strings.Contains(out, "state streams intact") {
			fail("the checkpoint is not reported intact")
		}
	case strings.Contains(line, "bin/runner checkpoints dump"):
		checkTourDump(t, line, out)
	default:
		t.Fatalf("tour line %q: the test has no check for it: add one to (*tourRun).check", line)
	}
}

// checkTourDump checks a dump of the aggregate's state: one entry a key, each key one of
// the job's 100 ("k0" to "k99"), each value a sum.
func checkTourDump(t *testing.T, line, out string) {
	t.Helper()
	keys := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Key, State string
			Value      any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("tour line %q: %q is not a JSON entry: %v", line, l, err)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e.Key, "k"))
		if _, isNumber := e.Value.(float64); e.State != "sum" || !strings.HasPrefix(e.Key, "k") || err != nil || n < 0 || n >= 100 || !isNumber || keys[e.Key] {
			t.Fatalf("tour line %q: entry %s is not one sum of a key k0 to k99", line, l)
		}
		keys[e.Key] = true
	}
	if len(keys) == 0 {
		t.Fatalf("tour line %q printed no entry", line)
	}
}

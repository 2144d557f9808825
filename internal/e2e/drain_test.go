package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/connectors"
)

// loadSavepoint reads the metadata of the fsstorage savepoint ptr.
func loadSavepoint(t *testing.T, ptr string) *checkpoint.Metadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(strings.TrimPrefix(ptr, "file://"), "_metadata"))
	if err != nil {
		t.Fatalf("savepoint %q: %v", ptr, err)
	}
	m, err := checkpoint.DecodeMetadata(b)
	if err != nil {
		t.Fatalf("savepoint %q: %v", ptr, err)
	}
	return m
}

var finishedLine = regexp.MustCompile(`finished in \S+: (\d+) records`)

// TestStopDrainCommitsWhatWasReadAndFinishes drains a running word count with `runner stop
// --drain --savepoint-path DIR`: the runner exits 0, stop prints the final savepoint's
// pointer once the job has ended, and the committed output is exactly the counts of the
// lines the sources had read by that savepoint (its source positions say which), though
// the input was not read to its end. Resumed from the savepoint, the job finishes at once,
// processes nothing and commits nothing more.
func TestStopDrainCommitsWhatWasReadAndFinishes(t *testing.T) {
	j, input, full := newRescaleWordcount(t, 9)
	r := j.run(t)
	if !r.owns(t) {
		t.Fatalf("the job did not start:\n%s", tail(r.out.String(), 20))
	}
	waitOutput(t, r, "checkpoint complete", time.Minute)
	target := filepath.Join(j.dir, "drained")
	out, err := runnerCmd(t, "stop", "--config", j.config, "--plugin-dir", testbin.PluginDir(t), "--drain", "--savepoint-path", target)
	if err != nil {
		t.Fatalf("stop --drain: %v\nrunner:\n%s", err, tail(r.out.String(), 30))
	}
	if !strings.Contains(out, "job drained") {
		t.Fatalf("stop --drain said:\n%s\nthe runner:\n%s", out, tail(r.out.String(), 20))
	}
	ptr := lastLine(out)
	if !strings.HasPrefix(strings.TrimPrefix(ptr, "file://"), target) {
		t.Fatalf("savepoint %q is not under --savepoint-path %s", ptr, target)
	}
	m := loadSavepoint(t, ptr)
	src := m.Operator("source")
	if !m.Savepoint || src == nil || !src.Finished {
		t.Fatalf("%s: savepoint %v, source %+v: want a savepoint whose source is finished", ptr, m.Savepoint, src)
	}
	var positions [][]byte
	for _, st := range src.Subtasks {
		positions = append(positions, st.Operator)
	}
	unread, err := wordcheck.UnreadFrom(input, positions)
	if err != nil {
		t.Fatal(err)
	}
	read, err := wordcheck.ExpectedExcept(input, unread)
	if err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(read, j.output); err != nil {
		t.Fatalf("the drained output against the lines read by the savepoint: %v", err)
	}
	if wordcheck.Check(full, j.output) == nil {
		t.Fatal("the whole input was read before the drain: the test proves nothing; lower job.rate")
	}
	// What stop promised held when it returned (the output above was read then); the
	// runner process exits right after, stopping its plugins.
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("the drained runner: %v\n%s", err, tail(r.out.String(), 30))
	}
	if !finishedLine.MatchString(r.out.String()) {
		t.Fatalf("the drained runner did not say it finished:\n%s", tail(r.out.String(), 20))
	}
	before, _ := connectors.CommittedFiles(j.output)
	t.Logf("drained by savepoint %d: %d words read of %d", m.CheckpointID, total(read), total(full))

	r = j.run(t, "--from", ptr)
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("resumed from the drained savepoint: %v\n%s", err, tail(r.out.String(), 30))
	}
	if m := finishedLine.FindStringSubmatch(r.out.String()); m == nil || m[1] != "0" {
		t.Fatalf("resumed from the drained savepoint, the job did not finish at once with 0 records:\n%s", tail(r.out.String(), 20))
	}
	if err := wordcheck.Check(read, j.output); err != nil {
		t.Fatalf("after resuming from the drained savepoint: %v", err)
	}
	if after, _ := connectors.CommittedFiles(j.output); len(after) != len(before) {
		t.Fatalf("%d committed part files before resuming, %d after", len(before), len(after))
	}
}

// total sums the counts of words.
func total(counts map[string]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// play is one input line of the custom job: "player game score".
type play struct {
	player, game string
	score        int
}

// leaderboardLines computes the custom job's output from its plays, in input order: per
// play the player's plays so far, distinct games and best three scores.
func leaderboardLines(plays []play) []string {
	games := map[string]map[string]bool{}
	count := map[string]int{}
	best := map[string][]int{}
	var out []string
	for _, p := range plays {
		if games[p.player] == nil {
			games[p.player] = map[string]bool{}
		}
		games[p.player][p.game] = true
		count[p.player]++
		b := append(best[p.player], p.score)
		slices.Sort(b)
		slices.Reverse(b)
		best[p.player] = b[:min(len(b), 3)]
		top := make([]string, len(best[p.player]))
		for i, s := range best[p.player] {
			top[i] = strconv.Itoa(s)
		}
		out = append(out, fmt.Sprintf("%s\tplays=%d\tgames=%d\ttop=%s", p.player, count[p.player], len(games[p.player]), strings.Join(top, ",")))
	}
	slices.Sort(out)
	return out
}

// committedSorted returns the sorted lines of the committed part files in dir.
func committedSorted(t *testing.T, dir string) []string {
	t.Helper()
	files, err := connectors.CommittedFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range files {
		lines = append(lines, strings.Split(strings.TrimSuffix(mustRead(t, f), "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// TestCustomJobSavepointAndStop builds the custom Go job (examples/customjob) and runs it
// through Environment.Execute, its plugins in its own process. `runner savepoint --config F
// --job leaderboard` takes a savepoint of it, `runner stop --config F --job leaderboard
// --savepoint` stops it with another; resumed from the stop's savepoint, and then again
// from the first savepoint (the output committed after it is moved aside), the job's
// output is exactly the leaderboard computed from its input.
func TestCustomJobSavepointAndStop(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "customjob")
	build := exec.Command("go", "build", "-o", bin, "./examples/customjob")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/customjob: %v\n%s", err, b)
	}
	input := filepath.Join(dir, "plays.txt")
	var plays []play
	var sb strings.Builder
	players := []string{"ann", "ben", "cho", "dev", "eli", "fay", "gus"}
	games := []string{"chess", "go", "poker", "bridge", "hex"}
	for i := 0; i < 6000; i++ {
		p := play{players[(i*5)%len(players)], games[(i*3)%len(games)], (i * 7919) % 5000}
		plays = append(plays, p)
		fmt.Fprintf(&sb, "%s %s %d\n", p.player, p.game, p.score)
	}
	if err := os.WriteFile(input, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := leaderboardLines(plays)
	output, checkpoints := filepath.Join(dir, "out"), filepath.Join(dir, "checkpoints")
	config := filepath.Join(dir, "config.yaml")
	writeConfig(t, config, map[string]any{
		"execution.checkpointing.storage":       "filesystem",
		"execution.checkpointing.dir":           checkpoints,
		"execution.checkpointing.savepoint-dir": filepath.Join(dir, "savepoints"),
	})
	job := func(extra ...string) *runner {
		return startProcess(t, bin, append([]string{"-input", input, "-output", output, "-checkpoints", checkpoints,
			"-config", config, "-parallelism", "2", "-interval", "100ms"}, extra...)...)
	}
	control := func(r *runner, args ...string) string {
		t.Helper()
		out, err := runnerCmd(t, append(args, "--config", config, "--job", "leaderboard", "--plugin-dir", testbin.PluginDir(t))...)
		if err != nil {
			t.Fatalf("runner %s: %v\nthe job:\n%s", strings.Join(args, " "), err, tail(r.out.String(), 30))
		}
		ptr := lastLine(out)
		if m := loadSavepoint(t, ptr); !m.Savepoint || m.JobID != "leaderboard" {
			t.Fatalf("%s: savepoint %v of job %q, want a savepoint of job leaderboard", ptr, m.Savepoint, m.JobID)
		}
		return ptr
	}
	r := job("-rate", "600")
	waitOutput(t, r, "checkpoint complete", time.Minute)
	sp1 := control(r, "savepoint")
	sp2 := control(r, "stop", "--savepoint")
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("the custom job stopped with a savepoint: %v\n%s", err, tail(r.out.String(), 30))
	}
	if sp1 == sp2 {
		t.Fatalf("the savepoint and the stop's share the pointer %s", sp1)
	}
	got := committedSorted(t, output)
	if len(got) >= len(want) {
		t.Fatalf("the stopped job committed %d of %d lines: it was not stopped mid-input", len(got), len(want))
	}
	t.Logf("stopped with savepoint %s after committing %d of %d lines", sp2, len(got), len(want))
	for _, from := range []string{sp2, sp1} {
		r = job("-from", from)
		if err := r.wait(t, 2*time.Minute); err != nil {
			t.Fatalf("resumed from %s: %v\n%s", from, err, tail(r.out.String(), 30))
		}
		if d := diff(committedSorted(t, output), want); d != "" {
			t.Fatalf("resumed from %s: the output differs from the leaderboard of the input: %s", from, d)
		}
	}
}

// diff describes how got differs from want ("" if it does not).
func diff(got, want []string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %d lines, want %d", len(got), len(want))
	}
	return ""
}

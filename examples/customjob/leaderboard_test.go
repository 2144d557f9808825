package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/runner"
)

// expected computes the job's output from the input lines the simple way, one map per
// player, for comparison: the committed output must hold exactly these lines.
func expected(t *testing.T, input string, n int) []string {
	t.Helper()
	b, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	games := map[string]map[string]int64{}
	best := map[string][]int64{}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		p, ok := parsePlay(line)
		if !ok {
			continue
		}
		if games[p.Player] == nil {
			games[p.Player] = map[string]int64{}
		}
		games[p.Player][p.Game]++
		scores := append(best[p.Player], p.Score)
		slices.SortFunc(scores, func(a, b int64) int { return int(b - a) })
		best[p.Player] = scores[:min(len(scores), n)]
		out = append(out, summary(p.Player, games[p.Player], best[p.Player]))
	}
	slices.Sort(out)
	return out
}

// committed returns the lines of the committed part files in dir, sorted.
func committed(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// diff describes how got differs from want.
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

// TestLeaderboard runs the job on the bundled input, plugins in-process.
func TestLeaderboard(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // the control endpoint's token file goes here
	dir := t.TempDir()
	o := options{
		input: "input/plays.txt", output: filepath.Join(dir, "out"), checkpoints: filepath.Join(dir, "chk"),
		top: 3, parallelism: 2, interval: 100 * time.Millisecond,
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatalf("run: %v", err)
	}
	want := expected(t, o.input, o.top)
	if len(want) != 30 {
		t.Fatalf("the bundled input has %d plays, want 30", len(want))
	}
	if d := diff(committed(t, o.output), want); d != "" {
		t.Fatalf("output differs from the expected leaderboard: %s", d)
	}
	if !slices.Contains(want, "alice\tplays=8\tgames=3\ttop=1330,1310,1290") {
		t.Fatalf("expected output lacks alice's final summary: %q", want)
	}
}

// TestLeaderboardResumesFromCheckpoint interrupts a rate-limited run once a checkpoint is
// complete and resumes it with -from latest: the output must hold every summary exactly once.
func TestLeaderboardResumesFromCheckpoint(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // the control endpoint's token file goes here
	dir := t.TempDir()
	input := filepath.Join(dir, "plays.txt")
	var sb strings.Builder
	players := []string{"ann", "ben", "cho", "dev", "eli", "fay", "gus"}
	gamesList := []string{"chess", "go", "poker", "bridge"}
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&sb, "%s %s %d\n", players[i*7%len(players)], gamesList[i*3%len(gamesList)], (i*7919)%2000)
	}
	if err := os.WriteFile(input, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{
		input: input, output: filepath.Join(dir, "out"), checkpoints: filepath.Join(dir, "chk"),
		top: 4, parallelism: 2, interval: 100 * time.Millisecond, rate: 400,
	}
	want := expected(t, input, o.top)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	deadline := time.After(30 * time.Second)
	for waiting := true; waiting; {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("the first run ended before it could be interrupted (%v); lower the rate", err)
		case <-deadline:
			cancel()
			<-done
			t.Fatal("no checkpoint completed within 30s")
		case <-time.After(20 * time.Millisecond):
			// fsstorage completes checkpoint N by writing chk-N/_metadata; wait for one
			// whose output is committed.
			found, _ := filepath.Glob(filepath.Join(o.checkpoints, "leaderboard", "chk-*", "_metadata"))
			waiting = len(found) == 0 || len(committed(t, o.output)) == 0
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the interrupted run reported success")
	}
	partial := committed(t, o.output)
	if len(partial) >= len(want) {
		t.Fatalf("the interrupted run committed %d of %d lines: it was not interrupted", len(partial), len(want))
	}
	t.Logf("interrupted after committing %d of %d lines", len(partial), len(want))

	o.from, o.rate = runner.FromLatest, 0
	if err := run(context.Background(), o); err != nil {
		t.Fatalf("resume with -from latest: %v", err)
	}
	if d := diff(committed(t, o.output), want); d != "" {
		t.Fatalf("output after resuming differs from the expected leaderboard: %s", d)
	}
}

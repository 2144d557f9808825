package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
)

// firstRecordLine is the runner's log line when a keyed subtask starts its first batch.
const firstRecordLine = "first record processed"

// startupResult is item 6 for one backend: from starting `runner run` to the runner's
// first record processed.
type startupResult struct {
	backend string
	samples []time.Duration
}

// startup times `runner run` to the first record with each backend, alternating.
func (b *bench) startup(ctx context.Context, deadline time.Time) ([]*startupResult, error) {
	out := []*startupResult{{backend: builtins.Hashmap}, {backend: builtins.LevelDB}}
	for round := 0; round < b.s.StartupRounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("start-up: stopping after %d rounds (time budget)", round)
			break
		}
		for _, r := range out {
			d, err := b.startOnce(ctx, r.backend)
			if err != nil {
				return nil, err
			}
			r.samples = append(r.samples, d)
		}
	}
	for _, r := range out {
		b.logf("start-up %s: median %.0f ms over %d runs", r.backend, median(durationsMs(r.samples)), len(r.samples))
	}
	return out, nil
}

// startOnce starts the runner on a long aggregate job, waits for its first-record line,
// then interrupts it.
func (b *bench) startOnce(ctx context.Context, backend string) (time.Duration, error) {
	dir, err := freshDir(b.s.Work, "startup-"+backend)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf(`state.backend.type: %s
execution.checkpointing.storage: fsstorage
execution.checkpointing.dir: file://%s
job.name: startup
job.type: aggregate
job.parallelism: 2
job.keys: 1000
job.records: 1000000000
rest.port: 0
`, backend, filepath.Join(dir, "checkpoints"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return 0, fmt.Errorf("start-up config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.s.Runner, "run", "--config", cfg, "--plugin-dir", b.s.PluginDir)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, fmt.Errorf("runner stderr: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", b.s.Runner, err)
	}
	var took time.Duration
	var tail []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), firstRecordLine) {
			took = time.Since(start)
			break
		}
		tail = append(tail[max(0, len(tail)-9):], sc.Text())
	}
	// Stop the runner as a user would (it stops its plugins), reading what it still says.
	_ = cmd.Process.Signal(os.Interrupt)
	_, _ = io.Copy(io.Discard, stderr) // until the runner exits (or the timeout kills it)
	werr := cmd.Wait()
	if took == 0 {
		return 0, fmt.Errorf("runner with %s never logged %q (exit: %v); last lines:\n%s", backend, firstRecordLine, werr, strings.Join(tail, "\n"))
	}
	return took, nil
}

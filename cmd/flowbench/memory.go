package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowstate/flowstate/internal/procmem"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// memoryPoint is the peak resident memory of `runner run` and its plugins on the aggregate
// job with about keys distinct keys on one backend.
type memoryPoint struct {
	backend            string
	keys, records      int64 // job.keys and job.records
	distinct           int64 // distinct keys the job's generator emits, counted here
	runner, state, cpt int64 // peak RSS (VmHWM) of the runner, the backend and the storage plugin
	elapsed            time.Duration
}

// distinctShare is the share of job.keys that job.records = job.keys events of the
// aggregate job's generator reach (1 - 1/e: its keys are a hash of the event number).
const distinctShare = 1 - 1/math.E

// memory runs `runner run` on the aggregate job for each size of b.s.MemoryKeys distinct
// keys with each backend, and samples the peak resident memory of the runner and of its
// plugin processes.
func (b *bench) memory(ctx context.Context) ([]memoryPoint, error) {
	var out []memoryPoint
	for _, n := range b.s.MemoryKeys {
		for _, backend := range []string{builtins.Hashmap, builtins.LevelDB} {
			keys := int64(math.Ceil(float64(n) / distinctShare))
			p, err := b.memoryOnce(ctx, backend, keys)
			if err != nil {
				return out, err
			}
			b.logf("memory %s %s distinct keys: runner %s, %s plugin %s, fsstorage %s (%s; load %s)", backend, human(float64(p.distinct)),
				mib(p.runner), backend, mib(p.state), mib(p.cpt), p.elapsed.Round(time.Second), loadAverage())
			out = append(out, p)
		}
	}
	return out, nil
}

// memoryOnce runs the aggregate job with keys keys and as many records to its end (its
// final checkpoint) and returns the peaks.
func (b *bench) memoryOnce(ctx context.Context, backend string, keys int64) (memoryPoint, error) {
	p := memoryPoint{backend: backend, keys: keys, records: keys, distinct: generatorDistinct(keys, keys)}
	dir, err := freshDir(b.s.Work, "memory-"+backend)
	if err != nil {
		return p, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf(`state.backend.type: %s
execution.checkpointing.storage: fsstorage
execution.checkpointing.dir: file://%s
execution.checkpointing.interval: 60s
job.name: memory
job.type: aggregate
job.parallelism: 2
job.keys: %d
job.records: %d
rest.port: 0
`, backend, filepath.Join(dir, "checkpoints"), keys, keys)
	if backend == builtins.LevelDB {
		yaml += "state.backend.leveldb.localdir: " + filepath.Join(dir, "leveldb") + "\n"
	}
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return p, fmt.Errorf("memory config: %w", err)
	}
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, b.s.Runner, "run", "--config", cfg, "--plugin-dir", b.s.PluginDir)
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("start %s: %w", b.s.Runner, err)
	}
	// Often enough to see the plugins of a short run: a quick run's runner lives about
	// 50 ms on a fast machine, its plugins less.
	w := procmem.Watch(cmd.Process.Pid, 5*time.Millisecond)
	werr := cmd.Wait()
	peaks := w.Stop()
	p.elapsed = time.Since(start)
	if werr != nil {
		return p, fmt.Errorf("runner on the aggregate job with %d keys (%s): %w; last output:\n%s", keys, backend, werr, tail(stderr.String(), 10))
	}
	// Not wait4's figure for the runner: Linux gives there the largest of the runner and the
	// children it waited for, its plugins.
	var ok0, ok1, ok2 bool
	p.runner, ok0 = procmem.Max(peaks, filepath.Base(b.s.Runner))
	p.state, ok1 = procmem.Max(peaks, pluginhost.Prefix+backend)
	p.cpt, ok2 = procmem.Max(peaks, pluginhost.Prefix+builtins.FSStorage)
	if !ok0 || !ok1 || !ok2 {
		return p, fmt.Errorf("runner on the aggregate job (%s): no sample of the runner or its plugin processes (saw %+v)", backend, peaks)
	}
	return p, nil
}

// generatorDistinct counts the distinct keys of the first records events of the
// aggregate job's generator over keys keys (runtime/connectors.Generator: event i has key
// h(i) mod keys, h(i) = x xor (x >> 29) for x = i * 0x9E3779B97F4A7C15).
func generatorDistinct(keys, records int64) int64 {
	seen := make([]uint64, (keys+63)/64)
	var n int64
	for i := int64(0); i < records; i++ {
		x := uint64(i) * 0x9E3779B97F4A7C15
		k := (x ^ x>>29) % uint64(keys)
		if seen[k/64]&(1<<(k%64)) == 0 {
			seen[k/64] |= 1 << (k % 64)
			n++
		}
	}
	return n
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// mib formats bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

func (r *report) renderMemory(w io.Writer) {
	if len(r.memory) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("### Memory (issue 24)\n\nPeak resident memory (VmHWM of each process, sampled every 50 ms from /proc) of `bin/runner run` on the `aggregate` job, parallelism 2, fsstorage, a checkpoint every minute and at the end, each backend at its defaults: job.keys = job.records = distinct keys / (1 - 1/e), and the distinct keys the job's generator reaches counted by the benchmark. leveldb's defaults: 16 MiB of block cache and 16 MiB of memtable per keyed backend, its process's memory limit (`memory-limit`) 64 MiB + 80 MiB per keyed backend = 224 MiB. hashmap keeps all state on its heap by design.\n\n")
	p("| backend | distinct keys | records | runner | backend plugin | fsstorage plugin | run took |\n|---|---|---|---|---|---|---|\n")
	for _, m := range r.memory {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", m.backend, human(float64(m.distinct)), human(float64(m.records)), mib(m.runner), mib(m.state), mib(m.cpt), m.elapsed.Round(time.Second))
	}
	p("\n")
}

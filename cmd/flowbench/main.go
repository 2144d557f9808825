// Command flowbench measures Flowstate's plugins against the same plugins loaded
// in-process, and against the machine's own limits, and writes the figures into
// docs/performance.md (between its flowbench markers). `make bench` runs it.
//
// Unlike cmd/runner it links the built-in plugins' code, through their registry
// plugins/builtin (never a plugin package directly), to run them in the benchmark's own
// process beside the same plugins as processes.
//
// The jetstream and distributed phases start a nats-server of their own:
// $FLOWSTATE_NATS_SERVER, or the binary -nats-server names (make bench runs flowbench under
// scripts/with-nats.sh). The disaggregated phase needs an S3 server: $FLOWSTATE_S3_ENDPOINT,
// which scripts/with-s3.sh sets for the test server it starts (make bench runs under it too).
//
//	flowbench [-quick] [-only throughput,wordcount,checkpoint,pause,scale,incremental,startup,memory,jetstream,disaggregated,distributed]
//	          [-rounds N] [-state-mb N] [-memory-keys N,N...] [-disaggregated-gib N,N...] [-out docs/performance.md]
//	          [-plugin-dir bin/plugins] [-runner bin/runner] [-nats-server PATH] [-s3-endpoint URL] [-cpuprofile FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	jobrunner "github.com/flowstate/flowstate/runtime/runner"
)

// phases are the benchmark's parts, in the order they run.
var phases = []string{"throughput", "wordcount", "checkpoint", "pause", "scale", "incremental", "startup", "memory", "jetstream", "disaggregated", "distributed"}

func main() {
	if spec := os.Getenv(restoreChildEnv); spec != "" {
		os.Exit(restoreChild(spec))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "flowbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("flowbench", flag.ContinueOnError)
	out := fs.String("out", "docs/performance.md", "report to write (the part between its flowbench markers)")
	pluginDir := fs.String("plugin-dir", "bin/plugins", "directory of the built plugins (make build)")
	runner := fs.String("runner", "bin/runner", "runner binary, for the start-up figure")
	work := fs.String("work", filepath.Join(os.TempDir(), "flowbench"), "scratch directory, on the disk to measure")
	quick := fs.Bool("quick", false, "tiny sizes: check that every figure runs, in seconds")
	rounds := fs.Int("rounds", 0, "rounds of each comparison (0: 15 for the aggregate and word count, 5 for checkpoint and restore, 3 for jetstream and distributed; with -quick 2, and 1 for jetstream and distributed)")
	only := fs.String("only", strings.Join(phases, ","), "phases to run")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the benchmark process")
	stateMB := fs.Int64("state-mb", 0, "state of the checkpoint, restore and pause figures in MiB (0: 1024, or 4 with -quick)")
	natsServer := fs.String("nats-server", os.Getenv(natsServerEnv), "nats-server binary of the jetstream and distributed phases (default $"+natsServerEnv+")")
	memoryKeys := fs.String("memory-keys", "", "distinct keys of the memory figures, comma-separated (empty: 3000000, or 100000 with -quick); 3000000,30000000 adds the 30M figure (about 10 more minutes)")
	disaggGiB := fs.String("disaggregated-gib", "", "state sizes of the disaggregated phase in GiB, comma-separated (empty: 1, or 4 and 8 MiB with -quick); 1,4,16 adds 4 and 16 GiB")
	s3Endpoint := fs.String("s3-endpoint", os.Getenv(s3EndpointEnv), "S3 test server of the disaggregated phase (default $"+s3EndpointEnv+", which scripts/with-s3.sh sets)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The jobs run in this process, so it sets the collector as the runner binary does from
	// a configuration that leaves runner.memory.* at their defaults: once, before any run.
	defaults, err := config.Parse(nil, "")
	if err == nil {
		_, err = jobrunner.ApplyMemory(defaults)
	}
	if err != nil {
		return fmt.Errorf("memory settings: %w", err)
	}
	s := fullSettings()
	if *quick {
		s = quickSettings()
	}
	if *rounds > 0 {
		s.Rounds, s.JobRounds, s.JetStreamRounds, s.DistRounds = *rounds, *rounds, *rounds, *rounds
	}
	s.NATSServer = *natsServer

	if *stateMB > 0 {
		s.StateBytes, s.PauseBytes = *stateMB<<20, *stateMB<<20
	}
	if *memoryKeys != "" {
		keys, err := parseCounts(*memoryKeys)
		if err != nil {
			return fmt.Errorf("-memory-keys %q: %w", *memoryKeys, err)
		}
		s.MemoryKeys = keys
	}
	if *disaggGiB != "" {
		gib, err := parseCounts(*disaggGiB)
		if err != nil {
			return fmt.Errorf("-disaggregated-gib %q: %w", *disaggGiB, err)
		}
		s.DisaggBytes = nil
		for _, g := range gib {
			s.DisaggBytes = append(s.DisaggBytes, g<<30)
		}
	}
	s.S3Endpoint = *s3Endpoint
	if s.PluginDir, err = filepath.Abs(*pluginDir); err != nil {
		return fmt.Errorf("-plugin-dir: %w", err)
	}
	if s.Runner, err = filepath.Abs(*runner); err != nil {
		return fmt.Errorf("-runner: %w", err)
	}
	for _, name := range []string{builtins.Hashmap, builtins.LevelDB, builtins.Disaggregated, builtins.FSStorage} {
		if _, err := os.Stat(filepath.Join(s.PluginDir, pluginhost.Prefix+name)); err != nil {
			return fmt.Errorf("-plugin-dir %s: plugin %s is not built (run make build); plugin-mode figures need its binary: %w", s.PluginDir, name, err)
		}
	}
	want := map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !contains(phases, p) {
			return fmt.Errorf("-only: unknown phase %q (phases: %s)", p, strings.Join(phases, ", "))
		}
		want[p] = true
	}
	if s.Work, err = freshDir(*work, "run"); err != nil {
		return err
	}
	defer os.RemoveAll(s.Work)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bench{s: s, start: time.Now(), log: os.Stderr}
	rep := b.runPhases(ctx, want)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; %s left as it was", *out)
	}
	if err := writeReport(*out, rep); err != nil {
		return err
	}
	b.logf("wrote %s in %s", *out, rep.elapsed.Round(time.Second))
	for name, err := range rep.failures {
		b.logf("phase %s failed: %v", name, err)
	}
	if len(rep.failures) > 0 {
		return fmt.Errorf("%d phases failed (the report says which)", len(rep.failures))
	}
	return nil
}

// runPhases runs the wanted phases; a phase that fails is recorded and the others go on.
func (b *bench) runPhases(ctx context.Context, want map[string]bool) *report {
	rep := &report{machine: describeMachine(), settings: b.s, started: b.start, ran: want, failures: map[string]error{}}
	b.logf("machine: %d CPUs, %s, load %s; budget %s", rep.machine.CPUs, rep.machine.CPUModel, rep.machine.LoadStart, b.s.Budget)
	step := func(name string, f func() error) {
		if !want[name] || ctx.Err() != nil {
			return
		}
		b.logf("phase %s", name)
		if err := f(); err != nil {
			rep.failures[name] = err
			b.logf("phase %s failed: %v", name, err)
		}
	}
	step("throughput", func() error {
		for i, backend := range []string{builtins.Hashmap, builtins.LevelDB} {
			t, err := b.throughput(ctx, backend, b.deadline([]float64{0.10, 0.30}[i]))
			if err != nil {
				return err
			}
			rep.throughput = append(rep.throughput, t)
		}
		return nil
	})
	step("wordcount", func() (err error) { rep.wordCount, err = b.wordCount(ctx, b.deadline(0.40)); return })
	step("checkpoint", func() (err error) { rep.io, err = b.checkpointIO(ctx, b.deadline(0.52)); return })
	step("pause", func() (err error) { rep.pause, err = b.pauses(ctx); return })
	step("scale", func() (err error) { rep.scale, err = b.scale(ctx, builtins.Hashmap, b.deadline(1.0)); return })
	step("incremental", func() (err error) { rep.incr, err = b.incremental(ctx); return })
	step("startup", func() (err error) { rep.startup, err = b.startup(ctx, b.deadline(0.97)); return })
	step("memory", func() (err error) { rep.memory, err = b.memory(ctx); return })
	step("jetstream", func() (err error) { rep.jetStream, err = b.jetStream(ctx, b.deadline(1.0)); return })
	step("disaggregated", func() (err error) { rep.disagg, err = b.disaggregated(ctx); return })
	// The distributed phase comes last, and its rounds take a minute or more: it adds rounds
	// until the budget is spent, and for at least a third of the budget from its start.
	step("distributed", func() (err error) {
		deadline := b.deadline(1.0)
		if own := time.Now().Add(b.s.Budget / 3); own.After(deadline) {
			deadline = own
		}
		rep.distributed, err = b.distributed(ctx, deadline)
		return
	})
	rep.elapsed = time.Since(b.start)
	rep.machine.LoadEnd = loadAverage()
	return rep
}

// parseCounts parses comma-separated positive integers.
func parseCounts(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive whole number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

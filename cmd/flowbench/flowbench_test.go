package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {20, 1}, {50, 3}, {99, 5}, {100, 5}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is a number")
	}
	if xs[0] != 5 {
		t.Error("percentile sorted its argument")
	}
}

// TestPairedRatioFollowsTheRounds: a ratio is the median of the rounds' own ratios. Here
// the machine speeds up over three rounds and the first variant is 0.9x of the second in
// two of them: the ratio is 0.9, where the ratio of the two medians (4/5) would be 0.8.
func TestPairedRatioFollowsTheRounds(t *testing.T) {
	a, b := []float64{2, 4, 9}, []float64{2, 5, 10}
	if got := pairedRatio(a, b); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("pairedRatio(%v, %v) = %v, want 0.9 (the median of 1, 0.8 and 0.9)", a, b, got)
	}
	if got := pairedRatio(a, []float64{0, 0, 0}); !math.IsNaN(got) {
		t.Errorf("pairedRatio against zeros = %v, want NaN", got)
	}
}

func TestTargetVerdicts(t *testing.T) {
	if v := atLeast(0.6, 0.5, "").verdict(); v != "PASS" {
		t.Errorf("0.6 >= 0.5: %s", v)
	}
	if v := atLeast(0.4, 0.5, "").verdict(); v != "MISS" {
		t.Errorf("0.4 >= 0.5: %s", v)
	}
	if v := atMost(51, 50, "").verdict(); v != "MISS" {
		t.Errorf("51 <= 50: %s", v)
	}
	if v := atLeast(math.NaN(), 0.5, "").verdict(); v != "PENDING" {
		t.Errorf("no figure: %s", v)
	}
}

func TestPermSourceVisitsEveryKeyOncePerRound(t *testing.T) {
	const keys, p = 1000, 3
	seen := map[uint64]int{}
	for s := 0; s < p; s++ {
		r, err := permSource{records: 2 * keys, keys: keys}.Open(context.Background(), s, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			err := r.Read(context.Background(), 100, func(rec any) { seen[rec.(event).key]++ })
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(seen) != keys {
		t.Fatalf("%d distinct keys, want %d", len(seen), keys)
	}
	for k, n := range seen {
		if n != 2 {
			t.Fatalf("key %d seen %d times in 2 rounds", k, n)
		}
	}
}

func TestPermSourceResumesAtPosition(t *testing.T) {
	src := permSource{records: 50, keys: 7}
	r, _ := src.Open(context.Background(), 1, 2, nil)
	var first []event
	_ = r.Read(context.Background(), 5, func(rec any) { first = append(first, rec.(event)) })
	pos, _ := r.Position()
	var rest, again []event
	_ = r.Read(context.Background(), 5, func(rec any) { rest = append(rest, rec.(event)) })
	r2, err := src.Open(context.Background(), 1, 2, pos)
	if err != nil {
		t.Fatal(err)
	}
	_ = r2.Read(context.Background(), 5, func(rec any) { again = append(again, rec.(event)) })
	if len(rest) != 5 || len(again) != 5 {
		t.Fatalf("read %d and %d events after the position, want 5", len(rest), len(again))
	}
	for i := range rest {
		if rest[i] != again[i] {
			t.Fatalf("replay from the position differs at %d: %v vs %v", i, rest[i], again[i])
		}
	}
}

func TestWriteReportKeepsTextOutsideMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	old := "# Performance\n\nhand-written intro\n\n" + beginMarker + "\nstale figures\n" + endMarker + "\n\n## Profiling notes\n\nkept\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &report{machine: machine{CPUs: 2}, started: time.Now(), ran: map[string]bool{"throughput": true}, failures: map[string]error{}}
	if err := writeReport(path, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"hand-written intro", "## Profiling notes\n\nkept", "**Machine:** 2 CPUs", beginMarker, endMarker} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "stale figures") {
		t.Errorf("the old generated part survived:\n%s", got)
	}
	if strings.Count(got, beginMarker) != 1 {
		t.Errorf("markers duplicated:\n%s", got)
	}
}

// TestWriteReportOfTheDisaggregatedPhaseAlone: the disaggregated phase run alone writes
// its own section, after the main one the first time and in place later, and leaves the
// main section and the hand-written text as they were; a run without it leaves its section.
func TestWriteReportOfTheDisaggregatedPhaseAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	old := "# Performance\n\n" + beginMarker + "\nmain figures\n" + endMarker + "\n\n## Notes\n\nkept\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(ran string, failure error) string {
		t.Helper()
		rep := &report{machine: machine{CPUs: 2}, started: time.Now(), ran: map[string]bool{ran: true}, failures: map[string]error{}}
		if failure != nil {
			rep.failures[ran] = failure
		}
		if err := writeReport(path, rep); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		return string(b)
	}
	got := write("disaggregated", errors.New("first failure"))
	want := "# Performance\n\n" + beginMarker + "\nmain figures\n" + endMarker + "\n\n" + disaggBeginMarker + "\n"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "first failure") || !strings.HasSuffix(got, disaggEndMarker+"\n\n## Notes\n\nkept\n") {
		t.Fatalf("first write of the phase alone:\n%s", got)
	}
	got = write("disaggregated", errors.New("second failure"))
	if strings.Contains(got, "first failure") || !strings.Contains(got, "second failure") || strings.Count(got, disaggBeginMarker) != 1 || !strings.Contains(got, "main figures") {
		t.Fatalf("second write of the phase alone:\n%s", got)
	}
	got = write("throughput", nil)
	if strings.Contains(got, "main figures") || !strings.Contains(got, "second failure") || !strings.HasSuffix(got, "## Notes\n\nkept\n") {
		t.Fatalf("a run without the phase:\n%s", got)
	}
}

// TestQuickRunMeasuresEveryFigure runs every phase on tiny sizes against the real plugin
// binaries and the runner, and checks what the figures must satisfy whatever the speed.
func TestQuickRunMeasuresEveryFigure(t *testing.T) {
	s := quickSettings()
	s.PluginDir, s.Runner, s.Work = testbin.PluginDir(t), testbin.Runner(t), t.TempDir()
	s.NATSServer = natstest.Binary(t)
	s.Rounds, s.JobRounds, s.StartupRounds = 1, 1, 1
	var progress bytes.Buffer
	b := &bench{s: s, start: time.Now(), log: &progress}
	want := map[string]bool{}
	for _, p := range phases {
		want[p] = true
	}
	// The disaggregated phase needs the S3 test server, which CI always starts.
	if b.s.S3Endpoint = os.Getenv(s3EndpointEnv); b.s.S3Endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set but CI is: make test runs under scripts/with-s3.sh", s3EndpointEnv)
		}
		delete(want, "disaggregated")
	}
	rep := b.runPhases(context.Background(), want)
	for name, err := range rep.failures {
		t.Errorf("phase %s: %v", name, err)
	}
	if t.Failed() {
		t.Fatalf("progress:\n%s", progress.String())
	}
	if len(rep.throughput) != 2 {
		t.Fatalf("%d throughput results, want hashmap and leveldb", len(rep.throughput))
	}
	for _, tr := range rep.throughput {
		for _, m := range modes {
			st := tr.runs[m].stats
			if st.Records != s.AggRecords {
				t.Errorf("%s %s processed %d records, want %d", tr.backend, m, st.Records, s.AggRecords)
			}
			if calls := float64(st.GetCalls+st.WriteCalls) / float64(st.Records); calls > 0.01 {
				t.Errorf("%s %s made %.4f state calls per record", tr.backend, m, calls)
			}
			if st.BytesSent == 0 || tr.runs[m].cpuPerRec[0] <= 0 {
				t.Errorf("%s %s: no bytes sent (%d) or no CPU time (%v)", tr.backend, m, st.BytesSent, tr.runs[m].cpuPerRec)
			}
		}
	}
	if rep.io == nil || rep.io.size < s.StateBytes*9/10 || len(rep.io.restore[plugin]) != 1 || len(rep.io.restore[inProcess]) != 1 {
		t.Fatalf("checkpoint I/O: %+v", rep.io)
	}
	if p := rep.pause; p == nil || len(p.pauses) < 2*len(p.ckpts) || len(p.ckpts) < 2 || p.records == 0 {
		t.Fatalf("pause: %+v", rep.pause)
	}
	if len(rep.scale) != len(s.ScaleKeys) {
		t.Fatalf("scale: %d points, want %d", len(rep.scale), len(s.ScaleKeys))
	}
	for _, sp := range rep.scale {
		if sp.size[plugin] != sp.size[inProcess] || sp.size[plugin] == 0 {
			t.Errorf("scale %d keys: checkpoint sizes differ between plugin (%d) and in-process (%d)", sp.keys, sp.size[plugin], sp.size[inProcess])
		}
	}
	if x := rep.incr; x == nil || (x.pending == "" && (x.full == 0 || x.incr >= x.full)) {
		t.Fatalf("incremental: %+v", rep.incr)
	}
	for _, st := range rep.startup {
		if len(st.samples) != 1 || st.samples[0] <= 0 {
			t.Errorf("start-up %s: %v", st.backend, st.samples)
		}
	}
	if len(rep.memory) != 2*len(s.MemoryKeys) {
		t.Fatalf("memory: %d points, want hashmap and leveldb at %d sizes", len(rep.memory), len(s.MemoryKeys))
	}
	for _, m := range rep.memory {
		// About the distinct keys asked for, and some memory in every process.
		if m.distinct < s.MemoryKeys[0]*9/10 || m.distinct > m.keys || m.runner < 1<<20 || m.state < 1<<20 || m.cpt < 1<<20 {
			t.Errorf("memory %s: %+v", m.backend, m)
		}
	}
	if x := rep.jetStream; x == nil || x.rounds != 1 || x.words == 0 || x.outputs != x.words {
		t.Fatalf("jetstream: %+v", rep.jetStream)
	} else {
		for _, st := range rawStages {
			if v := x.raw[st]; len(v.msgs) != 1 || !(v.msgs[0] > 0) || !(v.benchCPU[0] > 0) {
				t.Errorf("jetstream %s: %+v", st, v)
			}
		}
		// The connector's five figures ran through the runner, each checked by its run.
		if len(x.figures) != 5 {
			t.Errorf("jetstream: %d side-by-side figures, want the source, and the sink and the word count at two batch sizes", len(x.figures))
		}
		for _, f := range x.figures {
			if v := x.measured[f.figure]; len(v.msgs) != 1 || !(v.msgs[0] > 0) || !(v.benchCPU[0] > 0) || !(x.ratio(f) > 0) {
				t.Errorf("jetstream %s: %+v", f.figure, v)
			}
		}
	}
	checkQuickDistributed(t, s, rep.distributed)
	var md bytes.Buffer
	rep.render(&md)
	for _, want := range []string{"### Targets", "### 1-2.", "### 3-4.", "#### Synchronous snapshot pause", "### 5. Scale", "#### Incremental", "### 6. Start-up", "### Memory", "### JetStream",
		"### Distributed mode", "| 27.7 | " + distTargetFigure + " |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks section %q", want)
		}
	}
	if !want["disaggregated"] {
		t.Skip("the disaggregated phase did not run: no S3 server (scripts/with-s3.sh go test ...); the other phases were checked")
	}
	checkDisaggregatedFigures(t, b.s, rep)
}

// checkDisaggregatedFigures checks what the disaggregated phase's figures must satisfy at
// any speed: every run of every size ran and measured, the full checkpoint holds the whole
// state (its size computed here from the keys and the value size), the others far less,
// and the report says each figure.
func checkDisaggregatedFigures(t *testing.T, s settings, rep *report) {
	t.Helper()
	x := rep.disagg
	if x == nil || len(x.points) != len(s.DisaggBytes) {
		t.Fatalf("disaggregated: %+v, want a point at each of %v", x, s.DisaggBytes)
	}
	runs := map[disaggVariant][]string{vLevelDB: {runChange, runThroughput}, vLevelDBIncr: {runFill, runChange},
		vDisaggFill: {runFill}, vDisagg4: {runChange, runThroughput}, vDisagg16: {runThroughput}}
	for i, p := range x.points {
		if p.bytes != s.DisaggBytes[i] || len(p.runs) != 8 {
			t.Fatalf("disaggregated point %d: %d bytes, %d runs; want %d bytes and 8 runs", i, p.bytes, len(p.runs), s.DisaggBytes[i])
		}
		for v, kinds := range runs {
			for _, kind := range kinds {
				r := p.run(v, kind)
				switch {
				case r == nil:
					t.Fatalf("%s: no %s run of %s", gib(p.bytes), kind, v.name)
				case r.peakDisk <= 0:
					t.Errorf("%s %s %s: no local disk measured", gib(p.bytes), v.name, kind)
				case kind != runFill && (r.firstBatch <= 0 || r.firstRecord < r.firstBatch):
					t.Errorf("%s %s %s: recovery to first batch %s, to first record %s", gib(p.bytes), v.name, kind, r.firstBatch, r.firstRecord)
				case kind == runThroughput && !(r.rate > 0):
					t.Errorf("%s %s throughput: %v records/s", gib(p.bytes), v.name, r.rate)
				case kind != runThroughput && (r.ckpt <= 0 || r.ckptBytes <= 0):
					t.Errorf("%s %s %s: checkpoint %s writing %d bytes", gib(p.bytes), v.name, kind, r.ckpt, r.ckptBytes)
				}
				if v.cacheShare > 0 && r.bound != p.bytes/v.cacheShare+4*s.DisaggWriteBuffer {
					t.Errorf("%s %s: bound %d, want the cache %d plus 2 memtables of %d for each of 2 keyed backends", gib(p.bytes), v.name, r.bound, p.bytes/v.cacheShare, s.DisaggWriteBuffer)
				}
			}
		}
		state := p.keys * int64(s.StateValue)
		full, incr, disagg := p.run(vLevelDB, runChange).ckptBytes, p.run(vLevelDBIncr, runChange).ckptBytes, p.run(vDisagg4, runChange).ckptBytes
		// The disaggregated checkpoint's added bytes are the tables new since the last one,
		// adopted in place or copied: with the quick runs' 1 MiB write buffers, the change's
		// compactions rewrite up to about two thirds of the state, but never all of it.
		if full < state || incr >= full/2 || disagg >= full {
			t.Errorf("%s: checkpoints after the change added %d (leveldb), %d (incremental), %d (disaggregated) bytes; the full one must hold the %d bytes of values, the others less", gib(p.bytes), full, incr, disagg, state)
		}
	}
	var md bytes.Buffer
	rep.renderDisagg(&md)
	var sizes []string
	for _, n := range s.DisaggBytes {
		sizes = append(sizes, fmt.Sprintf("%d MiB", n>>20))
	}
	lo, hi := sizes[0], sizes[len(sizes)-1]
	for _, want := range []string{"**State sizes that ran:** " + strings.Join(sizes, ", ") + ".", "| 28.5 | checkpoint after 1% of the keys changed", "| 28.5 | recovery to first record, disaggregated / leveldb | 4 GiB | not run",
		"| 28.5 | recovery to first record, disaggregated, at the largest size / at the smallest | " + hi + " / " + lo + " |", "| 28.5 | throughput, disaggregated with the cache at 1/4",
		"| 28.5 | peak local disk, disaggregated, cache 1/16 | " + hi + " |", "#### Checkpoint after 1%", "#### Recovery to first record", "#### Throughput after recovery", "#### Local disk"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the disaggregated section lacks %q:\n%s", want, md.String())
		}
	}
	t.Logf("the disaggregated phase took %s", x.elapsed.Round(time.Millisecond))
}

// TestPluginModeNeedsTheBinaries: a plugin-mode run whose plugin directory lacks the
// binaries fails, naming the missing file, instead of measuring the built-ins in-process;
// the in-process variant of the same run needs no binary.
func TestPluginModeNeedsTheBinaries(t *testing.T) {
	empty := t.TempDir()
	job, err := aggregateJob(quickSettings())
	if err != nil {
		t.Fatal(err)
	}
	spec := runSpec{backend: builtins.Hashmap, mode: plugin, pluginDir: empty, checkpoints: t.TempDir()}
	_, err = runJob(context.Background(), spec, job)
	if !errors.Is(err, pluginhost.ErrUnknownPlugin) || !strings.Contains(err.Error(), "flowstate-plugin-hashmap") || !strings.Contains(err.Error(), empty) {
		t.Fatalf("plugin mode without binaries: %v; want ErrUnknownPlugin naming flowstate-plugin-hashmap in %s", err, empty)
	}
	if _, err := openHarness(context.Background(), empty, plugin, builtins.Hashmap, nil, t.TempDir()); !errors.Is(err, pluginhost.ErrUnknownPlugin) {
		t.Fatalf("harness in plugin mode without binaries: %v; want ErrUnknownPlugin", err)
	}
	spec.mode, spec.checkpoints = inProcess, t.TempDir()
	if job, err = aggregateJob(quickSettings()); err != nil {
		t.Fatal(err)
	}
	if r, err := runJob(context.Background(), spec, job); err != nil || r.stats.Records != quickSettings().AggRecords {
		t.Fatalf("in-process without binaries: %d records, %v", r.stats.Records, err)
	}
}

// TestLivePluginsRefusesInProcessInstances: the plugin-mode check fails for a plugin that
// runs in the benchmark's process, and passes for real plugin processes, naming their pids.
func TestLivePluginsRefusesInProcessInstances(t *testing.T) {
	ctx := context.Background()
	inproc := pluginhost.New(pluginhost.Options{Dir: t.TempDir(), Builtins: builtin.Constructors(), InProcess: true})
	defer inproc.Close()
	if _, err := livePlugins(ctx, inproc, plugin, builtins.Hashmap); err == nil || !strings.Contains(err.Error(), "benchmark's process") {
		t.Fatalf("an in-process hashmap passed the plugin-mode check: %v", err)
	}
	host := newHost(testbin.PluginDir(t), plugin)
	defer host.Close()
	pids, err := livePlugins(ctx, host, plugin, builtins.Hashmap, builtins.FSStorage)
	if err != nil || len(pids) != 2 || pids[0] == os.Getpid() || pids[0] == pids[1] {
		t.Fatalf("plugin processes: pids %v, %v; want two processes other than this one", pids, err)
	}
}

// TestMain lets the test binary serve as a restore child (see restoreChildEnv), as the
// flowbench binary does. The runners it starts write their control endpoints' token files
// in a runtime directory of this test process, never the user's own.
func TestMain(m *testing.M) {
	if spec := os.Getenv(restoreChildEnv); spec != "" {
		os.Exit(restoreChild(spec))
	}
	dir, err := os.MkdirTemp("", "flowbench-test-run-")
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Setenv("XDG_RUNTIME_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestGeneratorDistinctCountsTheJobsKeys: the distinct keys the memory figures report are
// those of the aggregate job's generator, counted here by running the generator itself
// over a small range: about 1 - 1/e of job.keys when job.records = job.keys.
func TestGeneratorDistinctCountsTheJobsKeys(t *testing.T) {
	const keys = 5000
	r, err := connectors.Generator{Records: keys, Keys: keys}.Open(context.Background(), 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for {
		err := r.Read(context.Background(), 1024, func(e any) { seen[strings.Clone(e.(connectors.Event).Key)] = true })
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := generatorDistinct(keys, keys); got != int64(len(seen)) {
		t.Fatalf("generatorDistinct = %d, the generator emitted %d distinct keys", got, len(seen))
	}
	if share := float64(len(seen)) / keys; share < distinctShare-0.02 || share > distinctShare+0.02 {
		t.Fatalf("%d of %d keys reached, want about %.3f of them", len(seen), keys, distinctShare)
	}
}

// TestJetStreamPhaseNeedsTheServer: without a nats-server binary the phase fails, naming
// the variable that gives it, instead of measuring nothing.
func TestJetStreamPhaseNeedsTheServer(t *testing.T) {
	b := &bench{s: quickSettings(), start: time.Now(), log: io.Discard}
	b.s.Work = t.TempDir()
	if _, err := b.jetStream(context.Background(), time.Now().Add(time.Minute)); err == nil || !strings.Contains(err.Error(), natsServerEnv) {
		t.Fatalf("jetstream phase without a server: %v; want an error naming %s", err, natsServerEnv)
	}
}

// TestJetStreamPhaseHoldsFiguresToTheirRawLimits: a side-by-side figure is measured in
// every round on the round's input, and its ratio is to the raw limit it names, round by
// round; its target row appears in the report's targets.
func TestJetStreamPhaseHoldsFiguresToTheirRawLimits(t *testing.T) {
	s := quickSettings()
	s.NATSServer, s.Work, s.JetStreamRounds = natstest.Binary(t), t.TempDir(), 2
	var seen []jetStreamRound
	saved := sideBySide
	t.Cleanup(func() { sideBySide = saved })
	// A figure that reads the input back, as a source into a discarding sink would.
	sideBySide = []sideBySideFigure{{item: "26.8", figure: "reader under test", against: rawConsume, goal: 0.7,
		run: func(ctx context.Context, r jetStreamRound) (stageRuns, error) {
			seen = append(seen, r)
			nc, err := nats.Connect(r.URL)
			if err != nil {
				return stageRuns{}, err
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			m := startMeter(r.ServerPID)
			got, _, err := consumeAll(ctx, js, r.CopyStream, r.CopyLines, nil)
			d, bcpu, scpu := m.stop()
			var out stageRuns
			out.add(got, r.CopyWords, d, bcpu, scpu)
			return out, err
		}}}
	b := &bench{s: s, start: time.Now(), log: io.Discard}
	x, err := b.jetStream(context.Background(), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Lines != x.lines || seen[0].Words != x.words || len(seen[0].Counts) != x.distinct || seen[0].Partitions != jsPartitions ||
		seen[0].CopyLines != int64(s.JetStreamCopyRepeat)*x.lines || seen[0].CopyWords != int64(s.JetStreamCopyRepeat)*x.words {
		t.Fatalf("the figure saw rounds %+v; the phase had %d lines, %d words", seen, x.lines, x.words)
	}
	f := x.figures[0]
	got := x.ratio(f)
	want := pairedRatio(x.measured[f.figure].msgs, x.raw[rawConsume].msgs)
	if len(x.measured[f.figure].msgs) != 2 || got != want || !(got > 0) {
		t.Fatalf("ratio %v, want %v from %v against %v", got, want, x.measured[f.figure].msgs, x.raw[rawConsume].msgs)
	}
	rep := &report{jetStream: x, failures: map[string]error{}}
	var md bytes.Buffer
	rep.render(&md)
	if !strings.Contains(md.String(), "| 26.8 | reader under test / ordered consumer (nats.go alone) |") {
		t.Fatalf("the targets lack the figure:\n%s", md.String())
	}
}

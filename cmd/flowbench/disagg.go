package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// The disaggregated phase (issue 28, point 5) measures the disaggregated state backend,
// its table files on the S3 test server, against leveldb, both with fsstorage's
// checkpoints on that server, side by side in one run: at each state size it fills both,
// changes 1% of the keys and checkpoints, then runs the read-modify-write job against the
// restored state. Every run is a job run through runner.Executor with the backend and
// fsstorage as plugin processes.

// Handle formats the phase checks, so that no variant falls back to another unseen: the
// constants of plugins/disaggregated and plugins/leveldb, which flowbench reaches only
// through plugins/builtin.
const (
	formatDisaggregated = "disaggregated-v1"
	formatIncremental   = "leveldb-incremental-v1"
)

// disaggVariant is one backend configuration of the phase.
type disaggVariant struct {
	name        string
	slug        string // in directory and bucket prefixes
	backend     string
	incremental bool  // leveldb: execution.checkpointing.incremental: true
	cacheShare  int64 // disaggregated: cache-size is the state size / cacheShare
}

var (
	vLevelDB     = disaggVariant{name: "leveldb", slug: "leveldb", backend: builtins.LevelDB}
	vLevelDBIncr = disaggVariant{name: "leveldb, incremental", slug: "leveldb-incr", backend: builtins.LevelDB, incremental: true}
	vDisaggFill  = disaggVariant{name: "disaggregated, cache 1/1", slug: "disagg1", backend: builtins.Disaggregated, cacheShare: 1}
	vDisagg4     = disaggVariant{name: "disaggregated, cache 1/4", slug: "disagg4", backend: builtins.Disaggregated, cacheShare: 4}
	vDisagg16    = disaggVariant{name: "disaggregated, cache 1/16", slug: "disagg16", backend: builtins.Disaggregated, cacheShare: 16}
)

// The runs of one variant at one size, in order: fill every key once (the final
// checkpoint only); restore that and change 1% of the keys (its final checkpoint is the
// checkpoint figure); restore that and read and write keys skewed as YCSB's workload F for
// a timed window (the throughput figure; cancelled at the window's end, no checkpoint).
const (
	runFill       = "fill"
	runChange     = "change 1%"
	runThroughput = "throughput"
)

// errWindowEnded ends a throughput run at the end of its measured window.
var errWindowEnded = errors.New("the measured window ended")

// disaggRun is what one run measured.
type disaggRun struct {
	variant disaggVariant
	kind    string
	elapsed time.Duration // Executor.Run, plugin start included
	// firstBatch and firstRecord are, in runs that restore, the times from the start of
	// Executor.Run to the runner's "first record processed" (a keyed subtask begins its
	// first batch, RunStats.FirstRecord) and to the job's function returning from its
	// first record, whose state it read.
	firstBatch, firstRecord time.Duration
	ckpt                    time.Duration // the final checkpoint, trigger to published metadata
	ckptBytes               int64         // what it wrote to the checkpoint storage (AddedBytes)
	last                    *checkpoint.Completed
	rate                    float64 // throughput runs: records/s over the window
	peakDisk                int64   // the backend's local directory, largest sample
	bound                   int64   // disaggregated: cache-size plus the memtables
}

// disaggPoint is what the phase measured at one state size.
type disaggPoint struct {
	bytes, keys int64
	zipf        *zipfian
	runs        []*disaggRun // in the order they ran
}

// run returns the run of v of kind, or nil.
func (p *disaggPoint) run(v disaggVariant, kind string) *disaggRun {
	for _, r := range p.runs {
		if r.variant == v && r.kind == kind {
			return r
		}
	}
	return nil
}

// disaggResult is the phase's figures, one point per state size that ran.
type disaggResult struct {
	started time.Time
	elapsed time.Duration
	points  []*disaggPoint
}

// disaggregated runs the phase at each size of b.s.DisaggBytes.
func (b *bench) disaggregated(ctx context.Context) (*disaggResult, error) {
	res := &disaggResult{started: time.Now()}
	defer func() { res.elapsed = time.Since(res.started) }()
	for i, size := range b.s.DisaggBytes {
		p, err := b.disaggSize(ctx, i, size)
		if p != nil {
			res.points = append(res.points, p)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// disaggSize measures one state size in a bucket of its own, removed at the end. Which
// backend runs first alternates from one size to the next.
func (b *bench) disaggSize(ctx context.Context, index int, size int64) (*disaggPoint, error) {
	bucket, err := newS3Bucket(ctx, b.s.S3Endpoint)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := bucket.remove(context.WithoutCancel(ctx)); err != nil {
			b.logf("disaggregated: %v", err)
		}
	}()
	p := &disaggPoint{bytes: size, keys: size / int64(b.s.StateValue+16)} // 8-byte keys, framing
	p.zipf = newZipfian(p.keys, zipfTheta)
	b.logf("disaggregated %s: %d keys of %d bytes, bucket %s", bytesHuman(size), p.keys, b.s.StateValue, bucket.name)
	step := func(v disaggVariant, kind string, from *disaggRun) (*disaggRun, error) {
		r, err := b.disaggRun(ctx, bucket, p, v, kind, from)
		if err != nil {
			return nil, fmt.Errorf("%s of state, %s, %s run: %w", bytesHuman(size), v.name, kind, err)
		}
		p.runs = append(p.runs, r)
		b.logf("disaggregated %s %-26s %-10s: %s; load %s", bytesHuman(size), v.name, kind, r.summary(), loadAverage())
		return r, nil
	}
	// Each backend's runs of a stage, leveldb's first at even sizes.
	stage := func(leveldb, disagg func() error) error {
		first, second := leveldb, disagg
		if index%2 == 1 {
			first, second = disagg, leveldb
		}
		if err := first(); err != nil {
			return err
		}
		return second()
	}
	var fillL, fillD, chL, chD *disaggRun
	// leveldb fills with incremental checkpoints: its first checkpoint is a full base,
	// which both leveldb variants restore. The disaggregated backend fills with a cache as
	// large as the state: the runner's store reads each key before its first write (it
	// cannot know the key is new), and each read of a key whose table the cache lacks
	// downloads that table whole, so with the cache at 1/4 the fill alone ran for more than
	// 7 minutes at 1 GiB (its plugin had written 269 GB to its cache) before it was stopped.
	err = stage(func() (err error) { fillL, err = step(vLevelDBIncr, runFill, nil); return },
		func() (err error) { fillD, err = step(vDisaggFill, runFill, nil); return })
	if err == nil {
		err = stage(func() (err error) {
			if chL, err = step(vLevelDB, runChange, fillL); err == nil {
				_, err = step(vLevelDBIncr, runChange, fillL)
			}
			return
		}, func() (err error) { chD, err = step(vDisagg4, runChange, fillD); return })
	}
	if err == nil {
		err = stage(func() error { _, err := step(vLevelDB, runThroughput, chL); return err },
			func() error {
				if _, err := step(vDisagg4, runThroughput, chD); err != nil {
					return err
				}
				_, err := step(vDisagg16, runThroughput, chD)
				return err
			})
	}
	return p, err
}

// disaggRun runs kind with v at p's size, restoring from's last checkpoint if from is not
// nil, with its own local directory and checkpoint directory.
func (b *bench) disaggRun(ctx context.Context, bucket *s3Bucket, p *disaggPoint, v disaggVariant, kind string, from *disaggRun) (*disaggRun, error) {
	r := &disaggRun{variant: v, kind: kind}
	name := v.slug + "-" + strings.Fields(kind)[0]
	local, err := freshDir(b.s.Work, "disagg-"+name)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(local)
	// A run that never reaches its end (a backend that cannot read its state) fails.
	limit := 15*time.Minute + time.Duration(p.bytes>>30)*2*time.Minute
	ctx, stop := context.WithTimeoutCause(ctx, limit, fmt.Errorf("the run took longer than %s", limit))
	defer stop()
	probe := &jobProbe{filled: from != nil}
	src := permSource{keys: p.keys, records: p.keys}
	spec := runSpec{backend: v.backend, mode: plugin, pluginDir: b.s.PluginDir,
		checkpoints: bucket.uri("checkpoints/" + name), config: b.disaggConfig(bucket, p, v, local, from != nil)}
	if from != nil {
		spec.from = from.last.Location.ExternalPointer
	}
	var w window
	switch kind {
	case runChange:
		// The final checkpoint, the figure, is triggered once the job processed the
		// change: its time is the checkpoint's, not that of records queued before it.
		src.records = p.keys + p.keys/100
		src.drained = func() bool { return probe.records.Load() >= p.keys/100 }
	case runThroughput:
		src.records = math.MaxInt64
		src.skew, src.skewFrom = p.zipf, p.keys+p.keys/100
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer w.stop()
		spec.endCause = errWindowEnded
		probe.onFirst = func() { w.start(probe, b.s.DisaggWarmup, b.s.DisaggWindow, cancel) }
	}
	if v.cacheShare > 0 {
		r.bound = p.bytes/v.cacheShare + b.memtables()
	}
	watch := watchDisk(local, b.s.DiskSample)
	start := time.Now()
	res, err := runJob(ctx, spec, rmwJob(src, b.s.StateValue, probe))
	r.peakDisk = watch.Stop()
	if err != nil {
		return nil, err
	}
	r.elapsed = res.elapsed
	if from != nil {
		if res.stats.FirstRecord.IsZero() || probe.firstRecord().IsZero() {
			return nil, fmt.Errorf("the restored job processed no record")
		}
		r.firstBatch, r.firstRecord = res.stats.FirstRecord.Sub(start), probe.firstRecord().Sub(start)
	}
	if kind == runThroughput {
		var ok bool
		if r.rate, ok = w.rate(); !ok {
			return nil, fmt.Errorf("the run ended before its measured window did")
		}
		return r, nil
	}
	if res.last == nil || len(res.stats.CheckpointDurations) == 0 {
		return nil, fmt.Errorf("no checkpoint completed")
	}
	want := p.keys // the fill: every key once
	if kind == runChange {
		want = p.keys / 100 // the change, from where the fill ended
	}
	if res.stats.Records != want {
		return nil, fmt.Errorf("the job processed %d records, want %d", res.stats.Records, want)
	}
	r.last = res.last
	r.ckpt = res.stats.CheckpointDurations[len(res.stats.CheckpointDurations)-1]
	r.ckptBytes = res.last.Metadata.AddedBytes
	if err := checkHandles(r, bucket); err != nil {
		return nil, err
	}
	return r, nil
}

// memtables is the local space the disaggregated backend's journals may take beside its
// cache: twice write-buffer-size (the memtable and the one being flushed) per keyed
// backend of the job.
func (b *bench) memtables() int64 { return 2 * writeBuffer(b.s) * 2 }

// writeBuffer is the backends' write-buffer-size in the phase: the one set, or their
// default.
func writeBuffer(s settings) int64 {
	if s.DisaggWriteBuffer == 0 {
		return 16 << 20
	}
	return s.DisaggWriteBuffer
}

// disaggConfig returns the configuration lines of a run of v with local as the backend's
// local directory: fsstorage and, for the disaggregated backend, its tables on bucket; a
// run that restores claims the checkpoint (CLAIM), so that its first checkpoint is not a
// full one, and every run retains its checkpoints, which later runs restore.
func (b *bench) disaggConfig(bucket *s3Bucket, p *disaggPoint, v disaggVariant, local string, restores bool) string {
	c := bucket.options("execution.checkpointing.fsstorage.") +
		"execution.checkpointing.timeout: 1h\nexecution.checkpointing.num-retained: 1000\n"
	if restores {
		c += "execution.state-recovery.claim-mode: CLAIM\n"
	}
	prefix := "state.backend." + v.backend + "."
	c += prefix + "localdir: " + local + "\n"
	if wb := b.s.DisaggWriteBuffer; wb > 0 {
		c += fmt.Sprintf("%swrite-buffer-size: %db\n", prefix, wb)
	}
	if v.incremental {
		c += "execution.checkpointing.incremental: true\n"
	}
	if v.cacheShare > 0 {
		c += prefix + "remote: " + bucket.uri("tables") + "\n" + bucket.options(prefix) +
			fmt.Sprintf("%scache-size: %db\n", prefix, p.bytes/v.cacheShare)
	}
	return c
}

// checkHandles checks that r's checkpoint is what its variant must write, on the S3
// server: the disaggregated backend's handles list tables on the bucket, leveldb's are
// full (canonical), or with incremental checkpoints a chain whose change checkpoint added a
// delta to the base it restored.
func checkHandles(r *disaggRun, bucket *s3Bucket) error {
	if !strings.HasPrefix(r.last.Location.ExternalPointer, "s3://"+bucket.name+"/") {
		return fmt.Errorf("checkpoint %s is not on bucket %s", r.last.Location.ExternalPointer, bucket.name)
	}
	for _, op := range r.last.Metadata.Operators {
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				if err := checkHandle(r, h, bucket); err != nil {
					return fmt.Errorf("checkpoint %s, operator %s subtask %d: %w", r.last.Location.ExternalPointer, op.ID, st.Index, err)
				}
			}
		}
	}
	return nil
}

func checkHandle(r *disaggRun, h sdk.KeyedStateHandle, bucket *s3Bucket) error {
	v := r.variant
	switch {
	case v.cacheShare > 0:
		var meta struct{ Remote string }
		if err := json.Unmarshal(h.Meta, &meta); err != nil || h.Format != formatDisaggregated || meta.Remote != bucket.uri("tables") {
			return fmt.Errorf("a handle of format %q on remote %q, want %q on %s", h.Format, meta.Remote, formatDisaggregated, bucket.uri("tables"))
		}
	case !v.incremental:
		if h.Format != sdk.FormatCanonical {
			return fmt.Errorf("a handle of format %q, want %q (leveldb's full checkpoints)", h.Format, sdk.FormatCanonical)
		}
	case h.Format != formatIncremental:
		return fmt.Errorf("a handle of format %q, want %q", h.Format, formatIncremental)
	case r.kind == runChange && len(h.Files) < 2:
		return fmt.Errorf("the checkpoint after the change has %d files, want the base and a delta: not incremental", len(h.Files))
	}
	return nil
}

// summary is a run's progress line.
func (r *disaggRun) summary() string {
	var parts []string
	if r.firstBatch > 0 {
		parts = append(parts, fmt.Sprintf("first batch %s, first record %s", r.firstBatch.Round(time.Millisecond), r.firstRecord.Round(time.Millisecond)))
	}
	if r.last != nil {
		parts = append(parts, fmt.Sprintf("checkpoint %s writing %s", r.ckpt.Round(time.Millisecond), bytesHuman(r.ckptBytes)))
	}
	if r.rate > 0 {
		parts = append(parts, human(r.rate)+" records/s")
	}
	parts = append(parts, "local peak "+mib(r.peakDisk), "run "+r.elapsed.Round(time.Millisecond).String())
	return strings.Join(parts, ", ")
}

// window is the measured part of a throughput run: it opens warm after the job's first
// record, closes length later, and then cancels the run.
type window struct {
	mu     sync.Mutex
	n0, n1 int64
	t0, t1 time.Time
	timer  *time.Timer
}

// start opens the window warm from now and closes it length after it opened.
func (w *window) start(p *jobProbe, warm, length time.Duration, cancel context.CancelCauseFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(warm, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.n0, w.t0 = p.records.Load(), time.Now()
		w.timer = time.AfterFunc(length, func() {
			w.mu.Lock()
			w.n1, w.t1 = p.records.Load(), time.Now()
			w.mu.Unlock()
			cancel(errWindowEnded)
		})
	})
}

// stop stops a window still open.
func (w *window) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// rate returns the records per second processed in the window, false if it never closed.
func (w *window) rate() (float64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t1.IsZero() {
		return 0, false
	}
	return float64(w.n1-w.n0) / w.t1.Sub(w.t0).Seconds(), true
}

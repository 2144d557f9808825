package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/wordcheck"
)

// The distributed phase (issue 27, item 7): the word count from a JetStream stream to a
// JetStream stream, run by one runner alone and in distributed mode (cluster.enabled) by
// 1, 2 and 3 `runner run` processes of this machine, each variant once in every round, on
// a nats-server of the phase's own, the same input stream and the same output stream.

const (
	distInputStream  = "dist-in"
	distOutputStream = "dist-out"
	distOutSubject   = "out.counts"
	// distBucket is the KV bucket of the distributed runs' groups, created with the
	// server; every run has a job name of its own, so its keys and its repartition stream
	// are its own too.
	distBucket = "flowbench"
	// distSubjects are the input's partition subjects: line i goes on in.<i mod
	// distSubjects>. The JetStream source hands a subject to the subtask (the task, in
	// distributed mode) that the FNV-1a hash of its name mod the parallelism names
	// (distShares): in.0 .. in.5 fall 3 and 3 at parallelism 2, 2, 2 and 2 at 3, so every
	// source subtask reads the same share of the lines.
	distSubjects = 6
	// distCheckpointInterval is every variant's checkpoint interval.
	distCheckpointInterval = "1s"
)

// distVariant is one way the phase runs the word count.
type distVariant struct {
	key     string // in job names and the log
	name    string // in the report
	runners int    // 0: one runner as usual (cluster.enabled false); n: n runners in distributed mode
}

// distVariants run in every round, in an order that turns by one from round to round.
var distVariants = []distVariant{
	{"single", "one runner, cluster.enabled false", 0},
	{"d1", "distributed, 1 runner", 1},
	{"d2", "distributed, 2 runners", 2},
	{"d3", "distributed, 3 runners", 3},
}

// distRoundVariants returns the variants in the order round runs them.
func distRoundVariants(round int) []distVariant {
	n := len(distVariants)
	out := make([]distVariant, n)
	for i := range out {
		out[i] = distVariants[(i+round)%n]
	}
	return out
}

// The kinds of process a run's CPU time is split by.
const (
	kindRunner  = "runner"
	kindBackend = "hashmap plugin"
	kindStorage = "fsstorage plugin"
	kindServer  = "nats-server"
)

// distKinds are the kinds in the report's order.
var distKinds = []string{kindRunner, kindBackend, kindStorage, kindServer}

// distRuns are the rounds of one variant.
type distRuns struct {
	words  []float64            // words/s: from the first record of any runner to the last runner's exit
	output []float64            // words/s: from that first record until the output held a record per word
	tail   []float64            // seconds from the complete output to the last exit
	wall   []float64            // seconds from the start of the runners to the last exit
	cpu    map[string][]float64 // CPU us per word of each kind of process, summed over its processes
	// perRunner is the CPU us per word of each runner process (plugins apart), by round.
	perRunner [][]float64
	// Per word: bytes and messages the run's repartition stream holds at the end (its
	// state), and the data frames among those messages.
	repBytes, repMsgs, frames []float64
	// payload is the frames' payload bytes per word: the records the exchange carried.
	payload []float64
}

func (d *distRuns) add(r distRun, words int64) {
	w := float64(words)
	d.words = append(d.words, w/r.elapsed.Seconds())
	d.output = append(d.output, w/r.complete.Seconds())
	d.tail = append(d.tail, (r.elapsed - r.complete).Seconds())
	d.wall = append(d.wall, r.wall.Seconds())
	for _, k := range distKinds {
		d.cpu[k] = append(d.cpu[k], usPer(r.cpu[k], w))
	}
	var per []float64
	for _, c := range r.runnerCPU {
		per = append(per, usPer(c, w))
	}
	d.perRunner = append(d.perRunner, per)
	d.repBytes = append(d.repBytes, float64(r.repBytes)/w)
	d.repMsgs = append(d.repMsgs, float64(r.repMsgs)/w)
	d.frames = append(d.frames, float64(r.frames)/w)
	d.payload = append(d.payload, float64(r.frameBytes)/w)
}

// usPer is d in microseconds per word.
func usPer(d time.Duration, words float64) float64 { return float64(d.Nanoseconds()) / 1e3 / words }

// cpuTotal is the median over the rounds of the CPU us per word of every process.
func (d *distRuns) cpuTotal() float64 {
	var total []float64
	for i := range d.words {
		sum := 0.0
		for _, k := range distKinds {
			sum += d.cpu[k][i]
		}
		total = append(total, sum)
	}
	return median(total)
}

// distResult is the phase's figures.
type distResult struct {
	server              string // nats-server version
	inputBytes          int64
	lines, words        int64
	distinct            int
	parallelism         int
	shares              map[int][]int64 // lines each source subtask reads, by parallelism
	runs                map[string]*distRuns
	rounds              int
	started             time.Time
	loadStart, loadEnd  string
	elapsed             time.Duration
	frameBytes, markers float64 // from the last distributed run: bytes per frame, marker messages per frame
	raw                 frameRuns
	rawBytes            int64 // bytes of the raw frames in each round
}

// ratio is the median of the rounds' ratios of variant key's words/s to the single
// runner's, to the last exit; worst is the lowest of them.
func (r *distResult) ratio(key string) float64 {
	return pairedRatio(r.runs[key].words, r.runs["single"].words)
}

func (r *distResult) worst(key string) float64 {
	return minOf(roundRatios(r.runs[key].words, r.runs["single"].words))
}

// outputRatio is ratio of the words/s until the output was complete.
func (r *distResult) outputRatio(key string) float64 {
	return pairedRatio(r.runs[key].output, r.runs["single"].output)
}

// distGoal is issue 27's target: distributed on 1 runner at least this share of the
// single runner's words/s.
const distGoal = 0.3

// distributed runs the phase: it starts a nats-server, creates the group's KV bucket,
// publishes the word count's input once, and in each round runs every variant on it,
// checking each run's output.
func (b *bench) distributed(ctx context.Context, deadline time.Time) (*distResult, error) {
	if b.s.NATSServer == "" {
		return nil, fmt.Errorf("no nats-server binary: set %s or -nats-server (make bench runs flowbench under scripts/with-nats.sh, which builds it)", natsServerEnv)
	}
	if b.s.Runner == "" || b.s.PluginDir == "" {
		return nil, fmt.Errorf("no runner binary or plugin directory (make build, -runner, -plugin-dir)")
	}
	res := &distResult{inputBytes: b.s.DistBytes, parallelism: b.s.DistParallelism, runs: map[string]*distRuns{},
		started: time.Now(), loadStart: loadAverage(), shares: map[int][]int64{}, rawBytes: b.s.DistFrameBytes}
	dir, srv, stop, err := b.phaseServer(ctx, "distributed")
	if err != nil {
		return nil, err
	}
	defer stop()
	res.server = srv.version
	input := filepath.Join(dir, "input.txt")
	if err := writeText(input, b.s.DistBytes); err != nil {
		return nil, err
	}
	// The expected counts, from package wordcheck: its own split of the words, none of
	// the job's code.
	counts, err := wordcheck.Expected(input)
	if err != nil {
		return nil, fmt.Errorf("distributed: count the input: %w", err)
	}
	var words int64
	for _, c := range counts {
		words += c
	}
	lines, err := readLines(input)
	if err != nil {
		return nil, err
	}
	res.lines, res.words, res.distinct = int64(len(lines)), words, len(counts)
	for _, p := range []int{1, 2, 3, b.s.DistParallelism} {
		res.shares[p] = distShares(int64(len(lines)), p)
	}
	if err := distSetUp(ctx, srv.url, lines); err != nil {
		return nil, err
	}
	for _, v := range distVariants {
		res.runs[v.key] = &distRuns{cpu: map[string][]float64{}}
	}
	b.logf("distributed: nats-server %s at %s; %d lines, %s words, %d distinct; parallelism %d", srv.version, srv.url, len(lines), human(float64(words)), len(counts), b.s.DistParallelism)
	for round := 0; round < b.s.DistRounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("distributed: stopping after %d rounds (time budget)", round)
			break
		}
		for _, v := range distRoundVariants(round) {
			spec := distSpec{variant: v, job: fmt.Sprintf("wc-%s-r%d", v.key, round+1), url: srv.url, serverPID: srv.pid,
				runner: b.s.Runner, pluginDir: b.s.PluginDir, parallelism: b.s.DistParallelism, counts: counts, words: words}
			if spec.work, err = freshDir(dir, "run"); err != nil {
				return nil, err
			}
			r, err := runDistributed(ctx, spec)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", v.name, round+1, err)
			}
			res.runs[v.key].add(r, words)
			if r.frames > 0 {
				res.frameBytes = float64(r.frameBytes) / float64(r.frames)
				res.markers = float64(r.repMsgs-r.frames) / float64(r.frames)
			}
			b.logf("distributed round %d: %-6s %s words/s (%s from the first record to the last exit, output complete after %s, %s in all; CPU %.2f us/word; repartition %.1f bytes/word)", round+1, v.key,
				human(float64(words)/r.elapsed.Seconds()), r.elapsed.Round(time.Millisecond), r.complete.Round(time.Millisecond), r.wall.Round(time.Millisecond),
				usPer(r.cpu[kindRunner]+r.cpu[kindBackend]+r.cpu[kindStorage]+r.cpu[kindServer], float64(words)), float64(r.repBytes)/float64(words))
		}
		if err := rawFrames(ctx, srv, b.s.DistFrameBytes, &res.raw); err != nil {
			return nil, err
		}
		b.logf("distributed round %d: raw frames of %d bytes: publish %.0f MB/s, read back %.0f MB/s, nats-server %.2f us/kB", round+1, distFrameSize,
			res.raw.publish[round], res.raw.consume[round], res.raw.serverCPU[round])
		res.rounds = round + 1
	}
	res.elapsed, res.loadEnd = time.Since(res.started), loadAverage()
	return res, nil
}

// distShares returns the lines each of parallelism source subtasks reads of lines
// published as the phase does: the subjects in.0 .. in.<distSubjects-1> go to subtasks as
// the JetStream source hands them out (the FNV-1a hash of the subject mod the parallelism).
func distShares(lines int64, parallelism int) []int64 {
	out := make([]int64, parallelism)
	for i, subj := range partitionSubjects("in", distSubjects) {
		h := fnv.New32a()
		h.Write([]byte(subj))
		n := lines / distSubjects
		if int64(i) < lines%distSubjects {
			n++
		}
		out[h.Sum32()%uint32(parallelism)] += n
	}
	return out
}

// distSetUp creates the group's KV bucket and the input stream, and publishes lines on it.
func distSetUp(ctx context.Context, url string, lines []string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return fmt.Errorf("distributed: connect to %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("distributed: %w", err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: distBucket, Storage: jetstream.FileStorage}); err != nil {
		return fmt.Errorf("distributed: KV bucket %s: %w", distBucket, err)
	}
	if err := recreateStream(ctx, js, jetstream.StreamConfig{Name: distInputStream, Subjects: []string{"in.>"}, Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	if err := publishLines(ctx, js, partitionSubjects("in", distSubjects), lines); err != nil {
		return fmt.Errorf("distributed: the input: %w", err)
	}
	// Async publishes that failed call no handler here: count what the stream holds.
	st, err := js.Stream(ctx, distInputStream)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = st.Info(ctx); err == nil && info.State.Msgs != uint64(len(lines)) {
			err = fmt.Errorf("it holds %d messages of the %d lines published", info.State.Msgs, len(lines))
		}
	}
	if err != nil {
		return fmt.Errorf("distributed: input stream %s: %w", distInputStream, err)
	}
	return nil
}

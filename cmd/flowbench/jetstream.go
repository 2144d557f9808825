package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/flowstate/flowstate/runtime/jobs"
)

// The jetstream phase (issue 26, item 8): the raw limits of JetStream on this machine,
// measured with nats.go alone on a real nats-server the benchmark starts, that the
// JetStream connector's figures are held to, side by side in the same rounds.

// natsServerEnv names the nats-server binary (scripts/with-nats.sh sets it; make bench runs
// flowbench under that script).
const natsServerEnv = "FLOWSTATE_NATS_SERVER"

// The streams and subjects of the phase: the input lines on jsPartitions partition subjects
// in.0, in.1, ..., the word count's output on one subject, and the copy stages' messages
// (the lines JetStreamCopyRepeat times over) on copy.0, copy.1, ...
const (
	jsInputStream  = "bench-in"
	jsOutputStream = "bench-out"
	jsCopyStream   = "bench-copy"
	jsPartitions   = 4
	jsOutSubject   = "out.counts"
	jsBatchStream  = "bench-batch"
	jsBatchMarker  = "batch.marker"
	// jsServerBatchMax is the server's limit on an atomic batch's messages in the phase
	// (jetstream.limits.batch.max_msgs; 1000 by default): the raw batches and the sink's
	// second figure use batches of that size.
	jsServerBatchMax = 4000
)

// rawStage names one of the raw limits.
type rawStage string

const (
	rawPublish   rawStage = "publish"   // async publish of the input messages
	rawConsume   rawStage = "consume"   // an ordered consumer reading them
	rawWordCount rawStage = "wordcount" // the hand-written word count from stream to stream
	rawBatch     rawStage = "batch"     // chained atomic batches of the server's default size
	rawBatchMax  rawStage = "batchmax"  // the same, of jsServerBatchMax messages
)

// rawStages are the raw limits, in the order each round measures them.
var rawStages = []rawStage{rawPublish, rawBatch, rawBatchMax, rawConsume, rawWordCount}

// stageRuns are the rounds of one stage: raw or a connector's figure.
type stageRuns struct {
	msgs, words []float64 // messages and words (records) per second
	benchCPU    []float64 // CPU microseconds per word of the benchmark process
	serverCPU   []float64 // CPU microseconds per word of the nats-server process
}

// add records one round: msgs messages and words words in d, with the CPU time of the
// benchmark and of the server.
func (s *stageRuns) add(msgs, words int64, d, bench, server time.Duration) {
	s.msgs = append(s.msgs, float64(msgs)/d.Seconds())
	s.words = append(s.words, float64(words)/d.Seconds())
	s.benchCPU = append(s.benchCPU, float64(bench.Nanoseconds())/1e3/float64(words))
	s.serverCPU = append(s.serverCPU, float64(server.Nanoseconds())/1e3/float64(words))
}

// jetStreamRound is what a side-by-side figure gets in each round: the server, and the
// round's input stream, which the raw stages have just published and read.
type jetStreamRound struct {
	URL         string // the server's client URL
	ServerPID   int    // for the server's CPU time (processCPU)
	InputStream string // holds Lines messages on in.0 .. in.<Partitions-1>, in line order
	Partitions  int
	Lines       int64
	Words       int64 // words of the input (jobs.SplitWords)
	// CopyStream holds the input lines CopyLines/Lines times over (CopyWords words) on
	// copy.0 .. copy.<Partitions-1>, as async publish wrote them and the ordered consumer
	// read them; CopyFile holds the same lines, for a figure that publishes them.
	CopyStream, CopyFile string
	CopyLines, CopyWords int64
	Counts               map[string]int64 // each word's count, for checking an output
	Work                 string           // a scratch directory of the round
	PluginDir            string           // built plugins (make build), for figures through the runner
	Runner               string           // the runner binary (make build)
	InputFile            string           // the input text, a line per message of InputStream
}

// sideBySideFigure is one of the connector's figures (issue 26, item 8), measured in
// every round right after the raw limit it is held to, on the same server and input.
type sideBySideFigure struct {
	item    string   // the item, "26.8"
	figure  string   // what it measures, for the report
	against rawStage // the raw limit it is a share of
	goal    float64  // the share it must reach (median of the rounds' ratios of msgs/s)
	// run measures one round, checking its output, and returns its rates and CPU time
	// (stageRuns.add with one round).
	run func(ctx context.Context, r jetStreamRound) (stageRuns, error)
}

// sideBySide are the figures of the JetStream connector (runtime/connectors/jetstream),
// measured beside the raw limits: its source into a discarding sink against the ordered
// consumer (>= 0.7x), its exactly-once sink against async publish (>= 0.5x), and the
// word count from stream to stream through the runner against the hand-written one
// (>= 0.5x). jsfigures.go sets them.
var sideBySide []sideBySideFigure

// jetStreamResult is the phase's figures.
type jetStreamResult struct {
	server     string // nats-server version
	inputBytes int64
	lines      int64
	words      int64
	distinct   int
	repeat     int   // the copy stages move the input this many times over
	outputs    int64 // output messages of the word count (one per word)
	raw        map[rawStage]*stageRuns
	figures    []*sideBySideFigure
	measured   map[string]*stageRuns // by figure
	rounds     int
}

// ratio is the median of the rounds' ratios of figure f's msgs/s to its raw limit's.
func (r *jetStreamResult) ratio(f *sideBySideFigure) float64 {
	return pairedRatio(r.measured[f.figure].msgs, r.raw[f.against].msgs)
}

// worst is the lowest of those ratios.
func (r *jetStreamResult) worst(f *sideBySideFigure) float64 {
	return minOf(roundRatios(r.measured[f.figure].msgs, r.raw[f.against].msgs))
}

// jetStream runs the phase: it starts a nats-server, writes the word count's input text,
// and in each round publishes it, reads it back and counts its words from stream to
// stream, then runs each side-by-side figure on the same input.
func (b *bench) jetStream(ctx context.Context, deadline time.Time) (*jetStreamResult, error) {
	if b.s.NATSServer == "" {
		return nil, fmt.Errorf("no nats-server binary: set %s or -nats-server (make bench runs flowbench under scripts/with-nats.sh, which builds it)", natsServerEnv)
	}
	dir, srv, stop, err := b.phaseServer(ctx, "jetstream")
	if err != nil {
		return nil, err
	}
	defer stop()
	input := filepath.Join(dir, "input.txt")
	if err := writeText(input, b.s.JetStreamBytes); err != nil {
		return nil, err
	}
	counts, words, _, err := handWrittenWordCount(input, filepath.Join(dir, "counts.txt"))
	if err != nil {
		return nil, err
	}
	lines, err := readLines(input)
	if err != nil {
		return nil, err
	}
	copyFile := filepath.Join(dir, "copy.txt")
	if err := repeatFile(input, copyFile, max(1, b.s.JetStreamCopyRepeat)); err != nil {
		return nil, err
	}
	res := &jetStreamResult{server: srv.version, inputBytes: b.s.JetStreamBytes, lines: int64(len(lines)), words: words, distinct: len(counts), repeat: max(1, b.s.JetStreamCopyRepeat),
		raw: map[rawStage]*stageRuns{}, measured: map[string]*stageRuns{}}
	for _, st := range rawStages {
		res.raw[st] = &stageRuns{}
	}
	for i := range sideBySide {
		res.figures = append(res.figures, &sideBySide[i])
		res.measured[sideBySide[i].figure] = &stageRuns{}
	}
	b.logf("jetstream: nats-server %s at %s; %d lines, %s words, %d distinct", srv.version, srv.url, len(lines), human(float64(words)), len(counts))
	for round := 0; round < b.s.JetStreamRounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("jetstream: stopping after %d rounds (time budget)", round)
			break
		}
		if err := b.jetStreamRound(ctx, srv, res, input, copyFile, lines, counts, round); err != nil {
			return nil, err
		}
		res.rounds = round + 1
	}
	return res, nil
}

// jetStreamRound measures the raw stages once on fresh streams, then the side-by-side
// figures on the same input.
func (b *bench) jetStreamRound(ctx context.Context, srv *natsServer, res *jetStreamResult, input, copyFile string, lines []string, counts map[string]int64, round int) error {
	nc, err := nats.Connect(srv.url)
	if err != nil {
		return fmt.Errorf("jetstream: connect to %s: %w", srv.url, err)
	}
	defer nc.Close()
	var asyncErrs atomic.Int64
	var firstErr atomic.Value
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) {
		if asyncErrs.Add(1) == 1 {
			firstErr.Store(fmt.Errorf("publish on %s: %w", m.Subject, err))
		}
	}))
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	asyncErr := func() error {
		if n := asyncErrs.Load(); n > 0 {
			return fmt.Errorf("%d async publishes failed; the first: %v", n, firstErr.Load())
		}
		return nil
	}
	for _, cfg := range []jetstream.StreamConfig{
		{Name: jsInputStream, Subjects: []string{"in.>"}, Storage: jetstream.FileStorage},
		{Name: jsOutputStream, Subjects: []string{"out.>"}, Storage: jetstream.FileStorage, AllowAtomicPublish: true},
		{Name: jsCopyStream, Subjects: []string{"copy.>"}, Storage: jetstream.FileStorage},
	} {
		if err := recreateStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	if err := b.rawRound(ctx, srv, js, asyncErr, res, lines, counts, round); err != nil {
		return err
	}
	return b.figuresRound(ctx, srv, res, input, copyFile, counts, round)
}

// rawRound measures the raw stages once: (a) async publish of the copy stream, (b) an
// ordered consumer reading it back, (c) the hand-written word count from the input stream
// to the output stream, whose output the first round checks against counts.
// asyncErr reports the async publishes of js that failed.
func (b *bench) rawRound(ctx context.Context, srv *natsServer, js jetstream.JetStream, asyncErr func() error, res *jetStreamResult, lines []string, counts map[string]int64, round int) error {
	words := res.words
	n := int64(len(lines))

	rep := int64(res.repeat)

	// (a) async publish of the input lines, res.repeat times over, across the copy
	// stream's partition subjects.
	meter := startMeter(srv.pid)
	for i := int64(0); i < rep; i++ {
		if err := publishLines(ctx, js, partitionSubjects("copy", jsPartitions), lines); err != nil {
			return err
		}
	}
	if err := asyncErr(); err != nil {
		return fmt.Errorf("jetstream publish: %w", err)
	}
	d, bcpu, scpu := meter.stop()
	res.raw[rawPublish].add(rep*n, rep*words, d, bcpu, scpu)
	b.logf("jetstream round %d: async publish %s msgs/s (%d in %s)", round+1, human(float64(rep*n)/d.Seconds()), rep*n, d.Round(time.Millisecond))

	// (a') the input lines res.repeat times over in atomic batches, each chained to the
	// last by the expected last sequence of its marker, as the sink commits.
	for _, st := range []rawStage{rawBatch, rawBatchMax} {
		size := map[rawStage]int{rawBatch: 1000, rawBatchMax: jsServerBatchMax}[st]
		meter = startMeter(srv.pid)
		if err := chainedBatches(ctx, js, lines, int(rep), size); err != nil {
			return err
		}
		d, bcpu, scpu = meter.stop()
		res.raw[st].add(rep*n, rep*words, d, bcpu, scpu)
		b.logf("jetstream round %d: atomic batches of %d %s msgs/s (%d in %s)", round+1, size, human(float64(rep*n)/d.Seconds()), rep*n, d.Round(time.Millisecond))
	}

	// The word counts' input, once over, untimed.
	if err := publishLines(ctx, js, partitionSubjects("in", jsPartitions), lines); err != nil {
		return err
	}
	if err := asyncErr(); err != nil {
		return fmt.Errorf("jetstream publish of the word count's input: %w", err)
	}

	// (b) an ordered consumer reading the copy stream back.
	meter = startMeter(srv.pid)
	got, size, err := consumeAll(ctx, js, jsCopyStream, rep*n, nil)
	if err != nil {
		return err
	}
	d, bcpu, scpu = meter.stop()
	if want := rep * textBytes(lines); got != rep*n || size != want {
		return fmt.Errorf("jetstream consume: read %d messages of %d bytes, published %d of %d bytes", got, size, rep*n, want)
	}
	res.raw[rawConsume].add(rep*n, rep*words, d, bcpu, scpu)
	b.logf("jetstream round %d: ordered consumer %s msgs/s (%d in %s)", round+1, human(float64(rep*n)/d.Seconds()), rep*n, d.Round(time.Millisecond))

	// (c) the hand-written word count, stream to stream.
	meter = startMeter(srv.pid)
	outputs, err := handWrittenStreamWordCount(ctx, js, n)
	if err != nil {
		return err
	}
	if err := asyncErr(); err != nil {
		return fmt.Errorf("jetstream word count: %w", err)
	}
	d, bcpu, scpu = meter.stop()
	if outputs != words {
		return fmt.Errorf("jetstream word count: %d output messages for %d words", outputs, words)
	}
	res.outputs = outputs
	res.raw[rawWordCount].add(n+outputs, words, d, bcpu, scpu)
	b.logf("jetstream round %d: hand-written word count %s words/s", round+1, human(float64(words)/d.Seconds()))
	if round == 0 {
		if err := checkOutputCounts(ctx, js, counts, words); err != nil {
			return fmt.Errorf("jetstream word count: %w", err)
		}
	}
	return nil
}

// figuresRound runs each side-by-side figure once, on the streams and files the raw
// stages of the round used.
func (b *bench) figuresRound(ctx context.Context, srv *natsServer, res *jetStreamResult, input, copyFile string, counts map[string]int64, round int) error {
	n, rep := res.lines, int64(res.repeat)
	words := res.words
	for _, f := range res.figures {
		work, err := freshDir(b.s.Work, "jetstream-figure")
		if err != nil {
			return err
		}
		r, err := f.run(ctx, jetStreamRound{URL: srv.url, ServerPID: srv.pid, InputStream: jsInputStream, Partitions: jsPartitions,
			Lines: n, Words: words, Counts: counts, Work: work, PluginDir: b.s.PluginDir, Runner: b.s.Runner, InputFile: input,
			CopyStream: jsCopyStream, CopyFile: copyFile, CopyLines: rep * n, CopyWords: rep * words})
		os.RemoveAll(work)
		if err != nil {
			return fmt.Errorf("%s: %w", f.figure, err)
		}
		m := res.measured[f.figure]
		m.msgs, m.words = append(m.msgs, r.msgs...), append(m.words, r.words...)
		m.benchCPU, m.serverCPU = append(m.benchCPU, r.benchCPU...), append(m.serverCPU, r.serverCPU...)
		b.logf("jetstream round %d: %s %s msgs/s", round+1, f.figure, human(r.msgs[len(r.msgs)-1]))
	}
	return nil
}

// chainedBatches publishes lines, repeat times over, on stream jsBatchStream in atomic
// batches of size messages: size-1 lines and a marker on jsBatchMarker, the first message
// of each batch expecting the marker subject's last sequence to be the previous batch's
// marker, as the exactly-once sink's commits do (without its checkpoints, state or
// formatting).
func chainedBatches(ctx context.Context, js jetstream.JetStream, lines []string, repeat, size int) error {
	if err := recreateStream(ctx, js, jetstream.StreamConfig{Name: jsBatchStream, Subjects: []string{"batch.>"}, Storage: jetstream.FileStorage, AllowAtomicPublish: true}); err != nil {
		return err
	}
	var last uint64
	msgs := make([]*nats.Msg, 0, size)
	total := repeat * len(lines)
	for from := 0; from < total; from += size - 1 {
		msgs = msgs[:0]
		for i := from; i < min(from+size-1, total); i++ {
			l := lines[i%len(lines)]
			m := nats.NewMsg("batch.out")
			m.Data = []byte(l)
			msgs = append(msgs, m)
		}
		mk := nats.NewMsg(jsBatchMarker)
		mk.Data = strconv.AppendInt(nil, int64(from), 10)
		msgs = append(msgs, mk)
		msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, jsBatchMarker)
		msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
		ack, err := jetstreamext.PublishMsgBatch(ctx, js, msgs, jetstreamext.BatchFlowControl{AckFirst: false})
		if err != nil {
			return fmt.Errorf("jetstream atomic batch of %d messages at line %d: %w", len(msgs), from+1, err)
		}
		last = ack.Sequence
	}
	return nil
}

// publishLines publishes line i on subjects[i mod len(subjects)], asynchronously (nats.go's
// default window of 4000 unacknowledged publishes), and waits until every acknowledgement
// is in.
func publishLines(ctx context.Context, js jetstream.JetStream, subjects []string, lines []string) error {
	stall := []jetstream.PublishOpt{jetstream.WithStallWait(30 * time.Second)}
	for i, line := range lines {
		if _, err := js.PublishAsync(subjects[i%len(subjects)], []byte(line), stall...); err != nil {
			return fmt.Errorf("jetstream publish of line %d: %w", i+1, err)
		}
	}
	return waitAcks(ctx, js)
}

// waitAcks waits until every async publish of js is acknowledged (or failed).
func waitAcks(ctx context.Context, js jetstream.JetStream) error {
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("jetstream: %d async publishes unacknowledged after 5 minutes", js.PublishAsyncPending())
	}
}

// partitionSubjects are prefix.0 .. prefix.<n-1>.
func partitionSubjects(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "." + strconv.Itoa(i)
	}
	return out
}

// consumeAll reads want messages of stream with an ordered consumer, calling each (if not
// nil) on each message's data in stream order, and returns how many messages and data
// bytes it read.
func consumeAll(ctx context.Context, js jetstream.JetStream, stream string, want int64, each func([]byte)) (int64, int64, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return 0, 0, fmt.Errorf("jetstream: ordered consumer on %s: %w", stream, err)
	}
	var got, size int64
	done := make(chan struct{})
	var once sync.Once
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if got >= want {
			return
		}
		data := m.Data()
		if each != nil {
			each(data)
		}
		got++
		size += int64(len(data))
		if got == want {
			once.Do(func() { close(done) })
		}
	})
	if err != nil {
		return 0, 0, fmt.Errorf("jetstream: consume %s: %w", stream, err)
	}
	defer cc.Stop()
	select {
	case <-done:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	case <-time.After(5 * time.Minute):
		return 0, 0, fmt.Errorf("jetstream: read only part of %d messages of %s within 5 minutes", want, stream)
	}
	return got, size, nil
}

// handWrittenStreamWordCount is the ceiling of the word count from stream to stream: one
// ordered consumer reads the input messages, splits each line's words as the wordcount job
// does (jobs.SplitWords), counts them in a map, and publishes each word's running count
// as a "word<TAB>count" message on jsOutSubject asynchronously, as the built-in word count
// emits them; at-least-once, with no checkpoint. It returns the messages published once
// every one is acknowledged.
func handWrittenStreamWordCount(ctx context.Context, js jetstream.JetStream, lines int64) (int64, error) {
	counts := map[string]int64{}
	var outputs int64
	var pubErr error
	stall := []jetstream.PublishOpt{jetstream.WithStallWait(30 * time.Second)}
	_, _, err := consumeAll(ctx, js, jsInputStream, lines, func(line []byte) {
		jobs.SplitWords(string(line), func(word string) {
			counts[word]++
			out := make([]byte, 0, len(word)+8)
			out = append(append(out, word...), '\t')
			out = strconv.AppendInt(out, counts[word], 10)
			if _, err := js.PublishAsync(jsOutSubject, out, stall...); err != nil && pubErr == nil {
				pubErr = err
			}
			outputs++
		})
	})
	if err != nil {
		return 0, err
	}
	if pubErr != nil {
		return 0, fmt.Errorf("jetstream word count: publish on %s: %w", jsOutSubject, pubErr)
	}
	return outputs, waitAcks(ctx, js)
}

// checkOutputCounts reads the output stream back and checks it against want, counted
// from the input file: a message per word, and each word's highest running count its count.
func checkOutputCounts(ctx context.Context, js jetstream.JetStream, want map[string]int64, words int64) error {
	got := make(map[string]int64, len(want))
	var bad error
	n, _, err := consumeAll(ctx, js, jsOutputStream, words, func(data []byte) {
		word, count, ok := strings.Cut(string(data), "\t")
		c, err := strconv.ParseInt(count, 10, 64)
		if !ok || err != nil {
			if bad == nil {
				bad = fmt.Errorf("output message %q is not word<TAB>count", data)
			}
			return
		}
		got[word] = max(got[word], c)
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	if n != words || len(got) != len(want) {
		return fmt.Errorf("output has %d messages for %d distinct words; the input holds %d words, %d distinct", n, len(got), words, len(want))
	}
	for w, c := range want {
		if got[w] != c {
			return fmt.Errorf("output counts %q %d times, the input holds it %d times", w, got[w], c)
		}
	}
	return nil
}

// recreateStream deletes the stream named in cfg if it exists and creates it afresh.
func recreateStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if err := js.DeleteStream(ctx, cfg.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("jetstream: delete stream %s: %w", cfg.Name, err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return fmt.Errorf("jetstream: create stream %s: %w", cfg.Name, err)
	}
	return nil
}

// repeatFile writes the text file from to to, n times over. The text ends in a line end
// (writeText), so to holds from's lines n times over.
func repeatFile(from, to string, n int) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return fmt.Errorf("%s does not end in a line end", from)
	}
	return os.WriteFile(to, bytes.Repeat(b, n), 0o644)
}

// readLines returns the lines of the text file path.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("jetstream input: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), 16<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("jetstream input %s: %w", path, err)
	}
	return out, nil
}

func textBytes(lines []string) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l))
	}
	return n
}

// meter times a stage: wall time, and CPU time of the benchmark and the server process.
type meter struct {
	pid          int
	start        time.Time
	bench, serve time.Duration
}

func startMeter(pid int) meter {
	return meter{pid: pid, start: time.Now(), bench: selfCPU(), serve: processCPU(pid)}
}

func (m meter) stop() (elapsed, bench, server time.Duration) {
	return time.Since(m.start), selfCPU() - m.bench, processCPU(m.pid) - m.serve
}

// natsServer is the nats-server process the phase measures against: one node, JetStream
// on with file storage in a directory of the benchmark's work dir (the disk measured),
// the server's default sync (every 2 minutes), on a free port of 127.0.0.1.
type natsServer struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	url     string
	pid     int
	version string
}

// phaseServer starts a phase's own nats-server, storing into a fresh directory name of
// the work directory; stop stops the server and removes the directory.
func (b *bench) phaseServer(ctx context.Context, name string) (dir string, srv *natsServer, stop func(), err error) {
	if dir, err = freshDir(b.s.Work, name); err != nil {
		return "", nil, nil, err
	}
	if srv, err = startNATS(ctx, b.s.NATSServer, filepath.Join(dir, "server")); err != nil {
		os.RemoveAll(dir)
		return "", nil, nil, err
	}
	return dir, srv, func() {
		srv.stop()
		os.RemoveAll(dir)
	}, nil
}

// startNATS starts bin with its store in dir and waits until its JetStream answers.
func startNATS(ctx context.Context, bin, dir string) (*natsServer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("nats-server store dir: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("nats-server: pick a port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logPath := filepath.Join(dir, "nats-server.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("nats-server log: %w", err)
	}
	// The server's one setting beyond its defaults: atomic batches of up to
	// jsServerBatchMax messages, for the sink's figure at that batch size.
	conf := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "jetstream { limits { batch { max_msgs: %d } } }\n", jsServerBatchMax), 0o644); err != nil {
		return nil, fmt.Errorf("nats-server configuration: %w", err)
	}
	cmd := exec.Command(bin, "-c", conf, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", dir, "-n", "flowbench")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &natsServer{cmd: cmd, exited: make(chan struct{}), url: fmt.Sprintf("nats://127.0.0.1:%d", port), pid: cmd.Process.Pid}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(s.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.probe(ctx)
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			tail, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("nats-server (%s) exited during start-up: %s", bin, tail)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("nats-server at %s: JetStream did not answer within 30 s: %w", s.url, err)
		}
	}
}

// probe connects and asks JetStream for the account's info; it records the server's version.
func (s *natsServer) probe(ctx context.Context) error {
	nc, err := nats.Connect(s.url, nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		return err
	}
	s.version = nc.ConnectedServerVersion()
	return nil
}

// stop kills the server and waits for it to exit.
func (s *natsServer) stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// rawStageNames are the raw limits as the report names them.
var rawStageNames = map[rawStage]string{
	rawPublish:   "async publish (nats.go alone)",
	rawConsume:   "ordered consumer (nats.go alone)",
	rawWordCount: "hand-written word count, stream to stream (nats.go alone)",
	rawBatch:     "atomic batches of 1000, chained (nats.go and orbit's jetstreamext alone)",
	rawBatchMax:  fmt.Sprintf("atomic batches of %d, chained (nats.go and orbit's jetstreamext alone)", jsServerBatchMax),
}

func (r *report) renderJetStream(w io.Writer) {
	x := r.jetStream
	if x == nil {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("### JetStream: the raw limits (issue 26)\n\n")
	p("nats.go alone (v1.56.0, its `jetstream` package) against one nats-server %s node the benchmark starts on 127.0.0.1: JetStream with file storage in the benchmark's work directory, the server's default sync (every 2 minutes), no replicas. The input is the word count's generated text (%s: %s lines, %s words, %s distinct), one message per line, line i on subject `in.<i mod %d>` of stream `%s`; the output stream `%s` (`allow_atomic` on) takes the word count's messages on `%s`. Each round starts on its streams deleted and created anew, and measures, in this order:\n\n",
		x.server, bytesHuman(x.inputBytes), human(float64(x.lines)), human(float64(x.words)), human(float64(x.distinct)), jsPartitions, jsInputStream, jsOutputStream, jsOutSubject)
	p("- **async publish**: `PublishAsync` of every line, %d times over (%s messages, line i of each pass on `copy.<i mod %d>` of stream `%s`, so that the copying outlasts a runner's fixed end by far), with nats.go's default window of 4000 unacknowledged publishes, timed until the last acknowledgement;\n", x.repeat, human(float64(int64(x.repeat)*x.lines)), jsPartitions, jsCopyStream)
	p("- **atomic batches**: the lines %d times over (%s messages) in JetStream atomic batches (orbit's `jetstreamext.PublishMsgBatch`, no ack before the commit) on stream `%s`, each of 999 lines and a marker, then each of %d lines and a marker, the first message of each batch expecting the marker subject's last sequence to be the previous batch's marker: the exactly-once sink's commits without its checkpoints. 1000 is the server's default limit on a batch; the phase's server raises it to %d (`jetstream { limits { batch { max_msgs: %d } } }`, its one setting beyond the defaults);\n", x.repeat, human(float64(int64(x.repeat)*x.lines)), jsBatchStream, jsServerBatchMax-1, jsServerBatchMax, jsServerBatchMax)
	p("- **ordered consumer**: one ordered consumer (`Consume`) reading those %s messages back, checked by count and bytes;\n", human(float64(int64(x.repeat)*x.lines)))
	p("- **hand-written word count**: one ordered consumer reads the input messages once over (published untimed on `in.<i mod %d>` of stream `%s` after the async publish), splits each line's words as the `wordcount` job does (`jobs.SplitWords`), counts them in a map and publishes each word's running count as a `word<TAB>count` message (as the built-in word count emits them: %s output messages, one per word) with `PublishAsync`, timed until the last acknowledgement: at-least-once, no checkpoints. The first round's output is read back and checked against the counts of the input file.\n\n", jsPartitions, jsInputStream, human(float64(x.outputs)))
	p("Messages/s counts the messages that crossed the server (the word count's: its input and its output); words/s (records/s) the words those messages carry, which is the word count's records. CPU is user+system time per word of the benchmark process (nats.go and the counting) and of the nats-server process, from getrusage and /proc. Medians over %d rounds, the lowest round beside them.\n\n", x.rounds)
	if len(x.figures) > 0 {
		p("The connector's figures run in the same rounds, on the same server and input, each through the runner binary (`runner run`, parallelism 1, the hashmap backend, checkpoints every %s, no restart): the `copy` job from the ordered consumer's stream (bounded) into nothing, against the ordered consumer; the `copy` job from the input file into the exactly-once sink on a stream of its own, against async publish, once with `sink.jetstream.batch-size` at its default (1000, the server's default limit) and once at %d; the `wordcount` job from the input stream to that stream (`job.source`, `job.sink`: jetstream), against the hand-written word count. Each output is read back and checked (every line once in order; every word's count). Their time runs from the runner's first record to its exit (its final checkpoint and commit included, its start-up and its plugins' not); their client CPU is the runner's and its plugins' user+system time over their whole run (start-up included), from getrusage of the waited children.\n\n", jsCheckpointInterval, jsServerBatchMax)
	}
	p("| stage | msgs/s | worst round | words/s | CPU us/word, client | CPU us/word, server |\n|---|---|---|---|---|---|\n")
	row := func(name string, v *stageRuns) {
		p("| %s | %s | %s | %s | %.3f | %.3f |\n", name, human(median(v.msgs)), human(minOf(v.msgs)), human(median(v.words)), median(v.benchCPU), median(v.serverCPU))
	}
	for _, st := range rawStages {
		row(rawStageNames[st], x.raw[st])
	}
	for _, f := range x.figures {
		row(f.figure, x.measured[f.figure])
	}
	p("\n")
	if len(x.figures) > 0 {
		p("| figure | / raw limit | median | worst round | target |\n|---|---|---|---|---|\n")
		for _, f := range x.figures {
			p("| %s | %s | %.2fx | %.2fx | >= %.1fx |\n", f.figure, rawStageNames[f.against], x.ratio(f), x.worst(f), f.goal)
		}
		p("\n")
	}
}

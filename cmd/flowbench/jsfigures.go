package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The JetStream connector's figures (issue 26, item 8), each run through the real runner
// binary on the round's input stream and server.
func init() {
	sideBySide = []sideBySideFigure{
		{item: "26.8", figure: "JetStream source into a discarding sink (runner, copy job)", against: rawConsume, goal: 0.7, run: sourceFigure},
		{item: "26.8", figure: "exactly-once JetStream sink from a file (runner, copy job)", against: rawPublish, goal: 0.5, run: sinkFigure(0)},
		{item: "26.8", figure: fmt.Sprintf("exactly-once JetStream sink from a file, sink.jetstream.batch-size %d (runner, copy job)", jsServerBatchMax), against: rawPublish, goal: 0.5, run: sinkFigure(jsServerBatchMax)},
		{item: "26.8", figure: "word count stream to stream, exactly once (runner)", against: rawWordCount, goal: 0.5, run: wordCountFigure(0)},
		{item: "26.8", figure: fmt.Sprintf("word count stream to stream, exactly once, sink.jetstream.batch-size %d (runner)", jsServerBatchMax), against: rawWordCount, goal: 0.5, run: wordCountFigure(jsServerBatchMax)},
	}
}

// The figures' output stream: records on fig.>, the sink's markers under its default
// prefix.
const (
	jsFigureStream  = "bench-fig"
	jsFigureSubject = "fig.out"
)

// jsCheckpointInterval is the runner's checkpoint interval in the figures: the sink
// commits what each interval wrote when its checkpoint completes.
const jsCheckpointInterval = "1s"

// sourceFigure runs the copy job from the round's copy stream (bounded), which the
// ordered consumer read, into nothing, and checks it read every message.
func sourceFigure(ctx context.Context, r jetStreamRound) (stageRuns, error) {
	res, err := runRunner(ctx, r, "js-source", fmt.Sprintf(`job.type: copy
job.source: jetstream
source.jetstream.stream: %s
source.jetstream.bounded: true
`, r.CopyStream))
	if err != nil {
		return stageRuns{}, err
	}
	if res.records != r.CopyLines {
		return stageRuns{}, fmt.Errorf("the copy job read %d records of the %d messages of stream %s", res.records, r.CopyLines, r.CopyStream)
	}
	return res.round(r.CopyLines, r.CopyWords), nil
}

// sinkFigure runs the copy job from the round's copy file (the lines the async publish
// wrote) into the exactly-once sink, in atomic batches of batch messages (0: the sink's
// default, the server's default limit), and checks the output stream holds each line
// once, in order.
func sinkFigure(batch int) func(ctx context.Context, r jetStreamRound) (stageRuns, error) {
	return func(ctx context.Context, r jetStreamRound) (stageRuns, error) {
		return runSinkFigure(ctx, r, batch)
	}
}

func runSinkFigure(ctx context.Context, r jetStreamRound, batch int) (stageRuns, error) {
	if err := figureStream(ctx, r.URL); err != nil {
		return stageRuns{}, err
	}
	res, err := runRunner(ctx, r, "js-sink", fmt.Sprintf(`job.type: copy
job.input: %s
job.sink: jetstream
sink.jetstream.stream: %s
sink.jetstream.subject: %s
%s`, r.CopyFile, jsFigureStream, jsFigureSubject, batchKey(batch)))
	if err != nil {
		return stageRuns{}, err
	}
	lines, err := readLines(r.CopyFile)
	if err != nil {
		return stageRuns{}, err
	}
	i := 0
	var bad error
	n, err := readSubject(ctx, r.URL, jsFigureStream, jsFigureSubject, func(data []byte) {
		if bad == nil && (i >= len(lines) || string(data) != lines[i]) {
			bad = fmt.Errorf("output message %d is %.80q, line %d of the input is %.80q", i+1, data, i+1, lines[min(i, len(lines)-1)])
		}
		i++
	})
	if err == nil {
		err = bad
	}
	if err == nil && n != r.CopyLines {
		err = fmt.Errorf("the output stream holds %d messages on %s for %d input lines", n, jsFigureSubject, r.CopyLines)
	}
	if err != nil {
		return stageRuns{}, fmt.Errorf("exactly-once sink: %w", err)
	}
	return res.round(r.CopyLines, r.CopyWords), nil
}

// batchKey is the configuration line of a sink's batch size (none for 0: the default).
func batchKey(batch int) string {
	if batch == 0 {
		return ""
	}
	return fmt.Sprintf("sink.jetstream.batch-size: %d\n", batch)
}

// wordCountFigure runs the word count from the round's input stream to the figures'
// output stream, exactly once, in atomic batches of batch messages (0: the default), and
// checks the counts against the input file's.
func wordCountFigure(batch int) func(ctx context.Context, r jetStreamRound) (stageRuns, error) {
	return func(ctx context.Context, r jetStreamRound) (stageRuns, error) {
		return runWordCountFigure(ctx, r, batch)
	}
}

func runWordCountFigure(ctx context.Context, r jetStreamRound, batch int) (stageRuns, error) {
	if err := figureStream(ctx, r.URL); err != nil {
		return stageRuns{}, err
	}
	res, err := runRunner(ctx, r, "js-wordcount", wordCountYAML(r.InputStream, jsFigureStream, jsFigureSubject)+batchKey(batch))
	if err != nil {
		return stageRuns{}, err
	}
	got := make(map[string]int64, len(r.Counts))
	var bad error
	n, err := readSubject(ctx, r.URL, jsFigureStream, jsFigureSubject, func(data []byte) {
		word, count, ok := strings.Cut(string(data), "\t")
		c, perr := strconv.ParseInt(count, 10, 64)
		if (!ok || perr != nil) && bad == nil {
			bad = fmt.Errorf("output message %q is not word<TAB>count", data)
		}
		got[word] = max(got[word], c)
	})
	if err == nil {
		err = bad
	}
	if err == nil && (n != r.Words || len(got) != len(r.Counts)) {
		err = fmt.Errorf("the output holds %d messages for %d distinct words; the input holds %d words, %d distinct", n, len(got), r.Words, len(r.Counts))
	}
	for w, c := range r.Counts {
		if err == nil && got[w] != c {
			err = fmt.Errorf("the output counts %q %d times, the input holds it %d times", w, got[w], c)
		}
	}
	if err != nil {
		return stageRuns{}, fmt.Errorf("word count stream to stream: %w", err)
	}
	return res.round(r.Lines+n, r.Words), nil
}

// wordCountYAML is the configuration of the word count from stream in (bounded) to
// subject of stream out through the exactly-once sink.
func wordCountYAML(in, out, subject string) string {
	return fmt.Sprintf(`job.type: wordcount
job.source: jetstream
source.jetstream.stream: %s
source.jetstream.bounded: true
job.sink: jetstream
sink.jetstream.stream: %s
sink.jetstream.subject: %s
`, in, out, subject)
}

// figureStream creates the figures' output stream afresh.
func figureStream(ctx context.Context, url string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return fmt.Errorf("jetstream: connect to %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return recreateStream(ctx, js, jetstream.StreamConfig{Name: jsFigureStream, Subjects: []string{"fig.>", "flowstate.markers.>"},
		Storage: jetstream.FileStorage, AllowAtomicPublish: true})
}

// readSubject reads every message of stream on subject (which may hold wildcards) with an
// ordered consumer, calling each on its data in order, and returns how many there were.
func readSubject(ctx context.Context, url, stream, subject string, each func([]byte)) (int64, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return 0, fmt.Errorf("jetstream: connect to %s: %w", url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	want, err := subjectCount(ctx, js, stream, subject)
	if err != nil {
		return 0, fmt.Errorf("jetstream: %w", err)
	}
	if want == 0 {
		return 0, nil
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("jetstream: stream %s: %w", stream, err)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return 0, fmt.Errorf("jetstream: ordered consumer on %s %s: %w", stream, subject, err)
	}
	var got int64
	for got < want {
		batch, err := cons.FetchNoWait(4096)
		if err != nil {
			return got, fmt.Errorf("jetstream: read %s %s: %w", stream, subject, err)
		}
		n := 0
		for m := range batch.Messages() {
			each(m.Data())
			got++
			n++
		}
		if err := batch.Error(); err != nil {
			return got, fmt.Errorf("jetstream: read %s %s: %w", stream, subject, err)
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return got, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return got, nil
}

// runnerRun is what one run of the runner took: the wall time from its first record to
// its exit (so neither its start nor its plugins' is counted), the CPU time of the runner
// and its plugins (their whole run) and of the server over the same span, and the records
// the runner said it processed.
type runnerRun struct {
	elapsed, cpu, serverCPU time.Duration
	records                 int64
}

// round is the run as one round of a figure that moved msgs messages carrying words words.
func (rr runnerRun) round(msgs, words int64) stageRuns {
	var out stageRuns
	out.add(msgs, words, rr.elapsed, rr.cpu, rr.serverCPU)
	return out
}

// runRunner runs `runner run` on a configuration of job (one subtask, the hashmap
// backend, checkpoints every jsCheckpointInterval into a directory of the round, no
// restart: a figure that fails fails the phase) plus extra, to its end.
func runRunner(ctx context.Context, r jetStreamRound, job, extra string) (runnerRun, error) {
	if r.Runner == "" || r.PluginDir == "" {
		return runnerRun{}, fmt.Errorf("no runner binary or plugin directory (make build, -runner, -plugin-dir)")
	}
	cfg := filepath.Join(r.Work, job+".yaml")
	if err := os.WriteFile(cfg, []byte(runnerYAML(job, 1, r.Work, jsCheckpointInterval, r.URL, extra)), 0o644); err != nil {
		return runnerRun{}, fmt.Errorf("%s config: %w", job, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Runner, "run", "--config", cfg, "--plugin-dir", r.PluginDir)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return runnerRun{}, err
	}
	cpu0 := childrenCPU()
	if err := cmd.Start(); err != nil {
		return runnerRun{}, fmt.Errorf("start %s: %w", r.Runner, err)
	}
	var first time.Time
	var server0 time.Duration
	var tail []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if first.IsZero() && strings.Contains(sc.Text(), firstRecordLine) {
			first, server0 = time.Now(), processCPU(r.ServerPID)
		}
		tail = append(tail[max(0, len(tail)-19):], sc.Text())
	}
	werr := cmd.Wait()
	end, server1 := time.Now(), processCPU(r.ServerPID)
	if werr != nil || first.IsZero() {
		return runnerRun{}, fmt.Errorf("runner on %s (exit: %v, first record seen: %v); last lines:\n%s\n%s", cfg, werr, !first.IsZero(), strings.Join(tail, "\n"), stdout.String())
	}
	res := runnerRun{elapsed: end.Sub(first), cpu: childrenCPU() - cpu0, serverCPU: server1 - server0}
	// "finished in 1.2s: N records, ..."
	if _, after, ok := strings.Cut(stdout.String(), "finished in "); ok {
		if _, after, ok = strings.Cut(after, ": "); ok {
			num, _, _ := strings.Cut(after, " ")
			res.records, _ = strconv.ParseInt(num, 10, 64)
		}
	}
	return res, nil
}

// runnerYAML is the configuration of a figure's runner: job at parallelism, the hashmap backend, checkpoints every interval into work/checkpoints,
// NATS at url, no restart (a figure that fails fails its phase), plus extra.
func runnerYAML(job string, parallelism int, work, interval, url, extra string) string {
	return fmt.Sprintf(`job.name: %s
job.parallelism: %d
state.backend.type: hashmap
execution.checkpointing.storage: fsstorage
execution.checkpointing.dir: file://%s
execution.checkpointing.interval: %s
nats.servers: %s
restart-strategy.type: none
rest.port: 0
%s`, job, parallelism, filepath.Join(work, "checkpoints"), interval, url, extra)
}

// childrenCPU is the user and system time of this process's children that have ended
// and been waited for, their own waited children included: the runner and its plugins.
func childrenCPU() time.Duration { return rusageCPU(syscall.RUSAGE_CHILDREN) }

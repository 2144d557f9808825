package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/procmem"
	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/config"
	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// distSpec is one run of the distributed phase.
type distSpec struct {
	variant           distVariant
	job               string // the job's name, the run's own
	work              string // a fresh directory: configuration, checkpoints
	url               string
	serverPID         int
	runner, pluginDir string
	parallelism       int
	counts            map[string]int64 // each word's count in the input (wordcheck.Expected)
	words             int64
}

// distRun is what one run measured.
type distRun struct {
	// elapsed runs from the first "first record processed" line of any runner to the
	// last runner's exit; complete from that line until the output stream held a record
	// per input word; wall from the start of the first runner to the last exit.
	elapsed, complete, wall time.Duration
	// cpu is the CPU time of each kind of process over the run: every runner and plugin
	// process over its whole life, the server from the start of the first runner to the
	// last exit.
	cpu map[string]time.Duration
	// runnerCPU is each runner process's own CPU time, its plugins apart.
	runnerCPU []time.Duration
	// The repartition stream at the end of the run: the bytes and messages its state
	// counts, its data frames and their payload bytes (0 for the single runner).
	repBytes, repMsgs, frames, frameBytes int64
}

// distRunTimeout bounds one run: a run that has not ended by then fails the phase.
const distRunTimeout = 5 * time.Minute

// distSample is how often the runners' process trees are sampled for their plugins' CPU.
const distSample = 20 * time.Millisecond

// runDistributed runs the word count of s once: the output stream afresh, then one
// runner (s.variant.runners 0) or s.variant.runners runners of the job in distributed mode,
// started together, each until it exits; then it checks the output against s.counts and
// reads the repartition stream's state.
func runDistributed(ctx context.Context, s distSpec) (distRun, error) {
	nc, err := nats.Connect(s.url)
	if err != nil {
		return distRun{}, fmt.Errorf("connect to %s: %w", s.url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return distRun{}, err
	}
	if err := recreateStream(ctx, js, jetstream.StreamConfig{Name: distOutputStream, Subjects: []string{distOutSubject, "flowstate.markers.>"},
		Storage: jetstream.FileStorage, AllowAtomicPublish: true}); err != nil {
		return distRun{}, err
	}
	cfg, err := distConfig(s)
	if err != nil {
		return distRun{}, err
	}
	res, err := runRunners(ctx, s, cfg, js)
	if err != nil {
		return distRun{}, err
	}
	if err := checkDistOutput(ctx, s); err != nil {
		return distRun{}, fmt.Errorf("output stream %s: %w", distOutputStream, err)
	}
	if s.variant.runners > 0 {
		if err := repartitionState(ctx, js, s.url, config.Cluster{}.StreamFor(s.job), &res); err != nil {
			return distRun{}, err
		}
	}
	return res, nil
}

// checkDistOutput reads the output stream's records into a file of the run's directory
// and checks them with package wordcheck, which counts the input on its own: every word's
// running counts 1..N, each once, N its count in the input, and nothing else.
func checkDistOutput(ctx context.Context, s distSpec) error {
	dir := filepath.Join(s.work, "output")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "records"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := readSubject(ctx, s.url, distOutputStream, distOutSubject, func(b []byte) {
		w.Write(b)
		w.WriteByte('\n')
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := wordcheck.Check(s.counts, dir); err != nil {
		return err
	}
	if n != s.words {
		return fmt.Errorf("%d output records for the input's %d words", n, s.words)
	}
	return nil
}

// distConfig writes the run's configuration: the word count from the input stream to the
// output stream, exactly once, parallelism s.parallelism, the hashmap backend, fsstorage
// in the run's directory, no restart (a failure fails the run), and, for runners in
// distributed mode, cluster.enabled with the phase's bucket.
func distConfig(s distSpec) (string, error) {
	extra := wordCountYAML(distInputStream, distOutputStream, distOutSubject)
	if s.variant.runners > 0 {
		extra += fmt.Sprintf("cluster.enabled: true\ncluster.kv-bucket: %s\n", distBucket)
	}
	path := filepath.Join(s.work, "config.yaml")
	if err := os.WriteFile(path, []byte(runnerYAML(s.job, s.parallelism, s.work, distCheckpointInterval, s.url, extra)), 0o644); err != nil {
		return "", fmt.Errorf("%s config: %w", s.job, err)
	}
	return path, nil
}

// runRunners starts the run's runners together and waits for every one to exit; the first
// that fails (or the run's timeout) stops the others. It measures the run's times, with js
// watching the output stream, and the CPU time of every process.
func runRunners(ctx context.Context, s distSpec, cfg string, js jetstream.JetStream) (distRun, error) {
	ctx, cancel := context.WithTimeout(ctx, distRunTimeout)
	defer cancel()
	n := max(1, s.variant.runners)
	server0 := processCPU(s.serverPID)
	start := time.Now()
	complete := watchOutput(ctx, js, s.words)
	procs := make([]*runnerProc, 0, n)
	var startErr error
	for i := range n {
		p, err := startRunnerProc(ctx, i, s.runner, s.pluginDir, cfg)
		if err != nil {
			startErr = err
			cancel()
			break
		}
		procs = append(procs, p)
	}
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = p.wait(); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	end, server1 := time.Now(), processCPU(s.serverPID)
	if err := errors.Join(append([]error{startErr}, errs...)...); err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			err = fmt.Errorf("the run did not end within %s (stopped): %w", distRunTimeout, err)
		}
		return distRun{}, err
	}
	res := distRun{wall: end.Sub(start), cpu: map[string]time.Duration{kindServer: server1 - server0}}
	done, err := complete()
	if err != nil {
		return distRun{}, err
	}
	var first time.Time
	for _, p := range procs {
		if !p.first.IsZero() && (first.IsZero() || p.first.Before(first)) {
			first = p.first
		}
		cpu, err := p.split(s.variant.runners > 0)
		if err != nil {
			return distRun{}, err
		}
		for k, d := range cpu {
			res.cpu[k] += d
		}
		res.runnerCPU = append(res.runnerCPU, cpu[kindRunner])
	}
	if first.IsZero() {
		return distRun{}, fmt.Errorf("no runner logged %q; the last lines of the first:\n%s", firstRecordLine, procs[0].lines())
	}
	// The output was complete by the last exit at the latest (the runners commit before
	// they exit); the watch, a poll behind, may see it after.
	res.elapsed, res.complete = end.Sub(first), min(done.Sub(first), end.Sub(first))
	return res, nil
}

// outputPoll is how often watchOutput asks for the output stream's count.
const outputPoll = 50 * time.Millisecond

// watchOutput polls the output stream's records on distOutSubject, in the background, until
// it holds words of them; the function it returns (called once the runners have exited)
// says when that was, to within outputPoll.
func watchOutput(ctx context.Context, js jetstream.JetStream, words int64) func() (time.Time, error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan time.Time, 1)
	var werr error
	go func() {
		defer close(done)
		t := time.NewTicker(outputPoll)
		defer t.Stop()
		for {
			n, err := subjectCount(ctx, js, distOutputStream, distOutSubject)
			if err != nil {
				werr = err
				return
			}
			if n >= words {
				done <- time.Now()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() (time.Time, error) {
		// The runners have exited: the output is final, and the watch sees it at its next
		// poll, unless it never will.
		defer cancel()
		var at time.Time
		ok := false
		select {
		case at, ok = <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		if !ok {
			if werr == nil {
				werr = ctx.Err()
			}
			return time.Time{}, fmt.Errorf("output stream %s: never held the %d records of the input's words: %v", distOutputStream, words, werr)
		}
		return at, nil
	}
}

// subjectCount returns how many messages stream holds on subject (which may hold
// wildcards).
func subjectCount(ctx context.Context, js jetstream.JetStream, stream, subject string) (int64, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	var n int64
	for _, c := range info.State.Subjects {
		n += int64(c)
	}
	return n, nil
}

// runnerProc is one `runner run` process of a run.
type runnerProc struct {
	i       int
	cmd     *exec.Cmd
	watch   *procmem.Watcher
	stdout  strings.Builder
	first   time.Time // when it logged its first "first record processed"
	tail    []string  // its last lines of log
	scanned chan struct{}
	peaks   []procmem.Peak // once it exited
}

// startRunnerProc starts `runner run --config cfg`, which a cancelled ctx interrupts (and
// kills 15 s later), watching its process tree.
func startRunnerProc(ctx context.Context, i int, runner, pluginDir, cfg string) (*runnerProc, error) {
	p := &runnerProc{i: i, scanned: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, runner, "run", "--config", cfg, "--plugin-dir", pluginDir)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(os.Interrupt) }
	p.cmd.WaitDelay = 15 * time.Second
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", runner, err)
	}
	p.watch = procmem.Watch(p.cmd.Process.Pid, distSample)
	go func() {
		defer close(p.scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if p.first.IsZero() && strings.Contains(sc.Text(), firstRecordLine) {
				p.first = time.Now()
			}
			p.tail = append(p.tail[max(0, len(p.tail)-29):], sc.Text())
		}
	}()
	return p, nil
}

// wait waits for the runner to exit, and fails unless it said its job finished.
func (p *runnerProc) wait() error {
	<-p.scanned // every line read before Wait closes the pipe
	err := p.cmd.Wait()
	p.peaks = p.watch.Stop()
	if err == nil && !strings.Contains(p.stdout.String(), "the job finished") && !strings.Contains(p.stdout.String(), "finished in ") {
		err = errors.New("it exited without saying its job finished")
	}
	if err != nil {
		return fmt.Errorf("runner %d: %w; last lines:\n%s", p.i+1, err, p.lines())
	}
	return nil
}

func (p *runnerProc) lines() string { return strings.Join(p.tail, "\n") + "\n" + p.stdout.String() }

// split returns the CPU time of the runner and of its plugin processes by kind. A plugin's
// is its last sample (every distSample, so it misses what the plugin used within an
// interval of its exit); the runner's is what wait4 reports for it, which holds the
// plugins it waited for, less the plugins'. It fails unless both plugins ran as processes
// of their own. distributed says the runner ran in distributed mode.
func (p *runnerProc) split(distributed bool) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	seen := map[string]int{}
	for _, pk := range p.peaks {
		switch pk.Name {
		case pluginhost.Prefix + builtins.Hashmap:
			out[kindBackend] += pk.CPU
			seen[kindBackend]++
		case pluginhost.Prefix + builtins.FSStorage:
			out[kindStorage] += pk.CPU
			seen[kindStorage]++
		}
	}
	if seen[kindBackend] == 0 || seen[kindStorage] == 0 {
		return nil, fmt.Errorf("runner %d (distributed: %v): no %s%s or %s%s process seen among its children (%+v): the figures would not be of plugin processes",
			p.i+1, distributed, pluginhost.Prefix, builtins.Hashmap, pluginhost.Prefix, builtins.FSStorage, p.peaks)
	}
	total := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	out[kindRunner] = total - out[kindBackend] - out[kindStorage]
	if out[kindRunner] <= 0 {
		return nil, fmt.Errorf("runner %d: its wait4 CPU time %s is not above its plugins' %s: it did not wait for them", p.i+1, total, out[kindBackend]+out[kindStorage])
	}
	return out, nil
}

// repartitionState reads the state of the run's repartition stream (bytes and messages)
// and its data frames (messages and payload bytes) into res, then deletes the stream.
func repartitionState(ctx context.Context, js jetstream.JetStream, url, stream string, res *distRun) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("repartition stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("repartition stream %s: %w", stream, err)
	}
	res.repBytes, res.repMsgs = int64(info.State.Bytes), int64(info.State.Msgs)
	data := natsjs.RepartitionSubjects(stream)[0]
	res.frames, err = readSubject(ctx, url, stream, data, func(b []byte) { res.frameBytes += int64(len(b)) })
	if err != nil {
		return err
	}
	if res.frames == 0 {
		return fmt.Errorf("repartition stream %s holds no data frame on %s", stream, data)
	}
	if err := js.DeleteStream(ctx, stream); err != nil {
		return fmt.Errorf("delete repartition stream %s: %w", stream, err)
	}
	return nil
}

package dataflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// attempt is one execution of a job, from a fresh start or a restored checkpoint, until
// it finishes or fails.
type attempt struct {
	job        *Job
	env        *Env
	log        hclog.Logger
	events     Events // env.Events, or noEvents
	acks       chan ack
	sourceDone chan int
	finish     chan struct{}
	completed  atomic.Int64
	// drain is closed when `runner stop --drain` asks the sources to end their input;
	// drainReq is that request, and drained the location of its savepoint once complete
	// (both the coordinator's; Run replies once the sinks committed it).
	drain    chan struct{}
	drainReq *SavepointRequest
	drained  *sdk.CompletedCheckpointStorageLocation
	// finishedSource says the attempt restored a finished source (see markFinished).
	finishedSource bool
	// restoredID is the id of the checkpoint the attempt restored, 0 for a fresh start.
	restoredID int64
	// firstRecord is when a keyed subtask started its first batch (Unix nanoseconds).
	firstRecord atomic.Int64
	abortMu     sync.Mutex
	abortedIDs  []int64 // checkpoints aborted in this attempt, in order
	async       sync.WaitGroup
	sources     []*sourceTask
	stages      [][]*stageTask
	// restoring counts the bytes of keyed state restored (env.RestoreProgress).
	restoring Progress
}

// started notes that a keyed subtask is about to process its first batch; the first call
// of the attempt logs it (start-up benchmarks wait for that line).
func (a *attempt) started() {
	if a.firstRecord.CompareAndSwap(0, time.Now().UnixNano()) {
		a.log.Info("first record processed", "job", a.job.Name)
	}
}

func (a *attempt) sendAck(ctx context.Context, x ack) {
	select {
	case a.acks <- x:
	case <-ctx.Done():
	}
}

// Run executes the job until it ends (bounded input: after its final checkpoint is
// complete and committed) or fails. It returns the first failure of any subtask or of the
// checkpoint coordinator; the caller decides whether to restore and run again.
func Run(ctx context.Context, job *Job, env Env) error {
	if err := job.Validate(); err != nil {
		return fmt.Errorf("job %q: %w", job.Name, err)
	}
	if err := checkMemory(job); err != nil {
		return fmt.Errorf("job %q: %w", job.Name, err)
	}
	if env.Logger == nil {
		env.Logger = hclog.NewNullLogger()
	}
	if env.Timeout <= 0 {
		env.Timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := newAttempt(job, &env)
	wd := &watchdog{every: env.CancellationTimeout, fire: env.OnCancellationTimeout}
	defer wd.stop() // after the closers below: they are part of the teardown
	closers, err := a.build(ctx)
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil {
				a.log.Warn("closing", "error", cerr)
			}
		}
	}()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, job.Parallelism*len(job.stages))
	start := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errs <- err
				cancel()
			}
		}()
	}
	for _, t := range a.sources {
		start("source", t.run)
	}
	for _, ts := range a.stages {
		for _, t := range ts {
			start(t.st.id, t.run)
		}
	}
	tasksDone := make(chan struct{})
	go func() { wg.Wait(); close(tasksDone) }()
	cerr := a.coordinate(ctx, tasksDone)
	cancel()
	wd.start()
	<-tasksDone
	a.async.Wait()
	if env.Stats != nil {
		for _, ts := range a.stages {
			for _, t := range ts {
				env.Stats.Stats.Add(t.store.Stats())
				env.Stats.SnapshotPauses = append(env.Stats.SnapshotPauses, t.pauses...)
			}
		}
		if first := a.firstRecord.Load(); first != 0 {
			env.Stats.FirstRecord = time.Unix(0, first)
		}
	}
	select {
	case err := <-errs:
		cerr = err
	default:
	}
	a.replyDrain(cerr)
	return cerr
}

func newAttempt(job *Job, env *Env) *attempt {
	a := &attempt{
		job:        job,
		env:        env,
		log:        env.Logger,
		acks:       make(chan ack, (max(1, env.MaxConcurrent)+3)*job.Parallelism*len(job.stages)),
		sourceDone: make(chan int, job.Parallelism),
		finish:     make(chan struct{}),
		drain:      make(chan struct{}),
		events:     env.Events,
	}
	if a.events == nil {
		a.events = noEvents{}
	}
	a.finishedSource = a.restoredFinished()
	if env.Restore != nil {
		a.restoredID = env.Restore.CheckpointID
		a.completed.Store(env.Restore.CheckpointID)
		env.Checkpoints.ObserveID(env.Restore.CheckpointID)
	}
	return a
}

// build creates every subtask, restoring state when env.Restore is set. It returns the
// functions that release what it opened.
func (a *attempt) build(ctx context.Context) (closers []func() error, err error) {
	job, env, p := a.job, a.env, a.job.Parallelism
	// inboxes[k][j] is the input of stage k subtask j, fed by every subtask of stage k-1.
	inboxes := make([][]*inbox, len(job.stages))
	for k := 1; k < len(job.stages); k++ {
		inboxes[k] = make([]*inbox, p)
		for j := range inboxes[k] {
			inboxes[k][j] = newInbox(p)
		}
	}
	last := len(job.stages) - 1
	sinkStates, err := a.operatorStates(SinkID, job.sink)
	if err != nil {
		return closers, err
	}
	outputFor := func(k, i int) (*output, SinkWriter, error) {
		if k == last {
			if err := a.fence("open sink subtask %d", i); err != nil {
				return nil, nil, err
			}
			w, err := job.sink.Open(ctx, i, p, sinkStates[i])
			if err != nil {
				return nil, nil, fmt.Errorf("open sink subtask %d: %w", i, err)
			}
			closers = append(closers, w.Close)
			measure(w, a.events.Subtask(SinkID, i))
			return newOutput(i, nil, false, nil, job.MaxParallelism, job.BatchSize, w), w, nil
		}
		return newOutput(i, inboxes[k+1], !env.AtLeastOnce, job.stages[k+1].keyOf, job.MaxParallelism, job.BatchSize, nil), nil, nil
	}
	finished := a.finishedSource
	srcStates := make([][]byte, p)
	if !finished {
		if srcStates, err = a.operatorStates(job.sourceID, job.source); err != nil {
			return closers, err
		}
	}
	for i := 0; i < p; i++ {
		if err := ctx.Err(); err != nil {
			return closers, err
		}
		var r SourceReader = finishedReader{}
		if !finished {
			if r, err = job.source.Open(ctx, i, p, srcStates[i]); err != nil {
				return closers, fmt.Errorf("open source %s subtask %d: %w", job.sourceID, i, err)
			}
			closers = append(closers, r.Close)
			measure(r, a.events.Subtask(job.sourceID, i))
		}
		out, _, err := outputFor(0, i)
		if err != nil {
			return closers, err
		}
		a.sources = append(a.sources, &sourceTask{a: a, idx: i, reader: r, out: out, triggers: make(chan *barrier, max(1, env.MaxConcurrent)), rate: job.Rate / float64(p),
			records: a.events.Subtask(job.sourceID, i)})
	}
	a.restoring = a.restoreProgress()
	defer func() { a.restoring.Finish(err) }()
	for k := 1; k < len(job.stages); k++ {
		st := job.stages[k]
		var tasks []*stageTask
		for i := 0; i < p; i++ {
			if err := ctx.Err(); err != nil {
				return closers, err
			}
			t := &stageTask{a: a, idx: i, st: st, in: inboxes[k][i], inputs: p, notify: make(chan struct{}, 1), done: a.completed.Load(),
				records: a.events.Subtask(st.id, i)}
			if k == last {
				t.sinkRecords = a.events.Subtask(SinkID, i)
			}
			empty := false
			if len(st.states) > 0 {
				if env.Backend == nil {
					return closers, fmt.Errorf("operator %q keeps state but no state backend is configured", st.id)
				}
				kb, restored, err := a.openKeyed(ctx, st, i)
				if err != nil {
					return closers, err
				}
				t.kb, empty = kb, !restored
			}
			t.store, err = state.NewStore(t.kb, job.MaxParallelism, st.states)
			if err != nil {
				if t.kb != nil {
					closers = append(closers, t.kb.Close)
				}
				return closers, fmt.Errorf("operator %q: %w", st.id, err)
			}
			if empty {
				t.store.StartEmpty() // nothing to read until its cache lets a value go
			}
			if t.kb != nil {
				closers = append(closers, t.store.Close) // the writes in flight, then the backend
			}
			if t.out, t.sink, err = outputFor(k, i); err != nil {
				return closers, err
			}
			tasks = append(tasks, t)
		}
		a.stages = append(a.stages, tasks)
	}
	if last == 0 {
		// The job's shape is wrong: no attempt can run it, so the restart strategy must not
		// retry it (a runner did, every minute, for ever).
		return closers, restart.Permanent(errors.New("a job needs at least one KeyBy before its sink"))
	}
	return closers, nil
}

// restoreProgress returns what shows the progress of the attempt's restore: the bytes of
// every keyed subtask's handles in all.
func (a *attempt) restoreProgress() Progress {
	if a.env.Restore == nil || a.env.RestoreProgress == nil {
		return noProgress{}
	}
	var total int64
	for _, st := range a.job.stages[1:] {
		for i := range a.job.Parallelism {
			total += handleBytes(a.restoreHandles(st, i))
		}
	}
	if total == 0 {
		return noProgress{}
	}
	return a.env.RestoreProgress(total)
}

// restoreHandles returns the keyed state handles of env.Restore that subtask i of stage st
// restores: those of the operator whose key groups intersect the subtask's.
func (a *attempt) restoreHandles(st *stage, i int) []sdk.KeyedStateHandle {
	if a.env.Restore == nil {
		return nil
	}
	kgs := state.KeyGroupRangeFor(a.job.MaxParallelism, a.job.Parallelism, i)
	var handles []sdk.KeyedStateHandle
	if os := a.env.Restore.Operator(st.id); os != nil {
		for _, sub := range os.Subtasks {
			for _, h := range sub.Keyed {
				if h.KeyGroups.Intersects(kgs) {
					handles = append(handles, h)
				}
			}
		}
	}
	return handles
}

// handleBytes sums the sizes of the files of handles.
func handleBytes(handles []sdk.KeyedStateHandle) int64 {
	var n int64
	for _, h := range handles {
		for _, f := range h.Files {
			n += f.Handle.Size
		}
	}
	return n
}

// countingReader is the state reader of a restore that counts the bytes read through it;
// it keeps checkpoint.Reader's LocalStatePath, so backends still read local files
// themselves.
type countingReader struct {
	checkpoint.Reader
	add func(n int64)
}

// Open implements sdk.StateReader.
func (r countingReader) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	rc, err := r.Reader.Open(ctx, h)
	if err != nil {
		return nil, err
	}
	return countingReadCloser{rc, r.add}, nil
}

type countingReadCloser struct {
	io.ReadCloser
	add func(n int64)
}

func (r countingReadCloser) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.add(int64(n))
	return n, err
}

// openKeyed creates subtask i's keyed backend and restores its key groups; restored says
// whether any state was restored into it (a backend is created empty).
func (a *attempt) openKeyed(ctx context.Context, st *stage, i int) (kb sdk.KeyedStateBackend, restored bool, err error) {
	job := a.job
	kgs := state.KeyGroupRangeFor(job.MaxParallelism, job.Parallelism, i)
	kb, err = a.env.Backend.CreateKeyedStateBackend(ctx, sdk.KeyedBackendParams{
		JobID: job.Name, OperatorID: st.id, Subtask: i, Parallelism: job.Parallelism,
		MaxParallelism: job.MaxParallelism, KeyGroups: kgs,
	})
	if err != nil {
		return nil, false, fmt.Errorf("create keyed state backend for operator %s subtask %d (%s): %w", st.id, i, a.env.BackendName, err)
	}
	if a.env.Restore == nil {
		return kb, false, nil
	}
	if a.env.Restore.MaxParallelism != job.MaxParallelism {
		kb.Close()
		return nil, false, fmt.Errorf("checkpoint %d has max parallelism %d, the job %d: key groups cannot be remapped", a.env.Restore.CheckpointID, a.env.Restore.MaxParallelism, job.MaxParallelism)
	}
	handles := a.restoreHandles(st, i)
	if len(handles) == 0 {
		return kb, false, nil
	}
	var counted int64
	reader := countingReader{Reader: checkpoint.Reader{Access: a.env.Checkpoints.Access()}, add: func(n int64) {
		counted += n
		a.restoring.Add(n)
	}}
	if err := kb.Restore(ctx, handles, reader); err != nil {
		kb.Close()
		return nil, false, a.restoreFailed(st.id, i, err)
	}
	// A backend that read its files itself (sdk.LocalStateLocator) read them past the
	// reader: they count now.
	a.restoring.Add(handleBytes(handles) - counted)
	return kb, true, nil
}

// restoreFailed describes err, the failed restore of operator id's subtask i. A backend that
// cannot read the snapshot's format (sdk.ErrUnsupported) will not after a restart either:
// that failure is permanent (restart.Permanent), and says so when another backend took the
// checkpoint.
func (a *attempt) restoreFailed(id string, i int, err error) error {
	m := a.env.Restore
	err = fmt.Errorf("restore operator %s subtask %d from checkpoint %d into %s: %w", id, i, m.CheckpointID, a.env.BackendName, err)
	if !errors.Is(err, sdk.ErrUnsupported) {
		return err
	}
	if m.Backend != "" && m.Backend != a.env.BackendName && !m.Savepoint {
		err = fmt.Errorf("%w; the checkpoint was taken by the %s state backend: a checkpoint moves to another backend only as a savepoint "+
			"(runner stop --savepoint), and if an earlier job of this name wrote it into this checkpoint directory, give this job its own "+
			"job.name or execution.checkpointing.dir", err, m.Backend)
	}
	return restart.Permanent(err)
}

// fence runs Env.Fence before a commit; its error says which commit it stopped.
func (a *attempt) fence(format string, args ...any) error {
	if a.env.Fence == nil {
		return nil
	}
	if err := a.env.Fence(); err != nil {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
	}
	return nil
}

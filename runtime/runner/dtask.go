package runner

import (
	"context"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/ownership"
)

// taskRun is the run of one task of a distributed job on this runner: an Executor running
// the task's job with the task's lease, until the task finishes, is handed over, loses its
// lease or fails for good.
type taskRun struct {
	id    string
	job   *dataflow.Job
	lease *ownership.Lease
	// requests reaches the run's checkpoint coordinator: savepoints, and the checkpoint
	// that hands the task over.
	requests chan dataflow.SavepointRequest
	cancel   context.CancelCauseFunc
	done     chan struct{}

	mu  sync.Mutex
	err error // the run's error, once done is closed
	// handingOver says a hand-over was asked for, whose checkpoint answers on handOverReply
	// (the member's goroutine alone uses them, as it does finished: the run finished and
	// the task keeps its lease).
	handingOver, finished bool
	// marked says the group knows the task finished (cluster.Group.MarkFinished).
	marked        bool
	handOverReply chan dataflow.SavepointResult
	// stopped says a stop of the job stopped the task; replies holds, by request, where
	// the answer to what the request asked of the run comes (nil: the run was cancelled).
	stopped bool
	replies map[string]chan dataflow.SavepointResult
	// cancelled says a stop of the job without savepoint cancelled the run: its end is
	// the stop's, not a failure.
	cancelled bool
	// mon is the run's monitor: its checkpoints and record counts, for the status.
	mon *monitor.Monitor
	// owned is closed once the run holds its checkpoints (Executor.OnOwned): a cancel
	// deletes them from then on (disposeOnCancel), not before.
	owned chan struct{}
}

func newTaskRun(id string, job *dataflow.Job, lease *ownership.Lease) *taskRun {
	return &taskRun{id: id, job: job, lease: lease, requests: make(chan dataflow.SavepointRequest, 4), done: make(chan struct{}),
		replies: map[string]chan dataflow.SavepointResult{}, mon: monitor.New(job.Name, monitor.Options{}),
		owned: make(chan struct{})}
}

// start runs the task's job with x from from, in the background.
func (r *taskRun) start(ctx context.Context, x *Executor, from string) {
	ctx, r.cancel = context.WithCancelCause(ctx)
	x.Monitor = r.mon
	x.OnOwned = func() { close(r.owned) } // called once
	go r.mon.Run(ctx)
	go func() {
		defer close(r.done)
		err := x.Run(ctx, r.job, from)
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}()
}

// result returns the run's error once it ended (ended true).
func (r *taskRun) result() (err error, ended bool) {
	select {
	case <-r.done:
	default:
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err, true
}

// cancellable reports whether a cancel of the job may cancel the run now: once it holds
// its checkpoints, so that the cancel deletes them as a lone runner's does; or when it
// ended, or failed to start and waits to try again (it holds nothing yet). A run cancelled
// while it starts would leave its task's checkpoints, and a fresh run of the job would then
// restore them (a task claimed during the stop, after another member's lease lapsed).
func (r *taskRun) cancellable() bool {
	select {
	case <-r.owned:
		return true
	case <-r.done:
		return true
	default:
		return r.mon.State() == monitor.JobRestarting
	}
}

// handOver asks the run, once, to take a checkpoint and stop, so that the task can be
// handed to another member with little to redo: the next holder restores that
// checkpoint, and commits what it covers if this run did not get to. A hand-over whose
// checkpoint failed is asked again at the next call.
func (r *taskRun) handOver(log hclog.Logger) {
	if r.handingOver {
		select {
		case res := <-r.handOverReply:
			if res.Err == nil {
				return // the run stops
			}
			log.Warn("the checkpoint handing a task over failed", "task", r.id, "error", res.Err)
			r.handingOver = false
		default:
			return
		}
	}
	if r.finished {
		return
	}
	r.handOverReply = make(chan dataflow.SavepointResult, 1)
	select {
	case r.requests <- dataflow.SavepointRequest{Checkpoint: true, Stop: true, Reply: r.handOverReply}:
		r.handingOver = true
		log.Info("handing a task over after its next checkpoint", "task", r.id)
	default:
	}
}

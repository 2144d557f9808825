package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flowstate/flowstate/runtime/cluster"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// errJobStopped ends a member's run once a stop of the whole job finished.
var errJobStopped = errors.New("the job was stopped")

// serve does what the job's open requests (runner savepoint, runner stop) ask of the
// tasks the member runs, and reports each task's outcome; the member that finishes the
// job's requests (cluster.Group.Finisher) finishes those every task has reported,
// writing the manifest of their savepoints. It returns errJobStopped once a stop the
// member took part in finished well.
func (m *member) serve(ctx context.Context) error {
	reqs, err := m.g.Requests(ctx)
	if err != nil {
		m.log.Warn("reading the job's requests", "error", err)
		return nil
	}
	if m.stopping != "" && !slices.ContainsFunc(reqs, func(r cluster.Request) bool { return r.ID == m.stopping }) {
		return m.stopFinished(ctx)
	}
	for _, req := range reqs {
		if req.Kind == cluster.RequestStop && m.stopping == "" {
			m.stopping = req.ID
			m.log.Info("the job is being stopped", "request", req.ID, "savepoint", req.Savepoint, "drain", req.Drain)
		}
		results, err := m.g.Results(ctx, req.ID)
		if err != nil {
			m.log.Warn("reading the outcomes of a request", "request", req.ID, "error", err)
			continue
		}
		for _, t := range slices.Sorted(maps.Keys(m.running)) {
			if _, done := results[t]; !done {
				m.act(ctx, req, m.running[t])
			}
		}
		if m.g.Finisher() && len(results) == len(m.g.Tasks()) {
			m.finish(ctx, req, results)
		}
	}
	return nil
}

// act asks task run r for what req asks (once), and reports its outcome once it has it.
func (m *member) act(ctx context.Context, req cluster.Request, r *taskRun) {
	var res cluster.TaskResult
	ok := true
	if err := m.checkTarget(req.Target, ""); req.Savepoints() && err != nil {
		res.Err = err.Error() // a request from whoever reaches the bucket writes where a runner's would
	} else {
		res, ok = r.served(req)
	}
	if !ok {
		return
	}
	if req.Kind == cluster.RequestStop && res.Err == "" {
		r.stopped = true
	}
	if err := m.g.Report(ctx, req.ID, r.id, res); err != nil {
		m.log.Warn("reporting a task's outcome", "task", r.id, "request", req.ID, "error", err)
	}
}

// finish finishes req, which every task reported: with the manifest of the tasks'
// savepoints, or with the failures of those that failed.
func (m *member) finish(ctx context.Context, req cluster.Request, results map[string]cluster.TaskResult) {
	var failed []string
	failedBy := map[string][]string{} // tasks by error: one line for the tasks that failed alike
	pointers := map[string]string{}
	for _, t := range slices.Sorted(maps.Keys(results)) {
		if res := results[t]; res.Err != "" {
			if failedBy[res.Err] == nil {
				failed = append(failed, res.Err)
			}
			failedBy[res.Err] = append(failedBy[res.Err], t)
		} else {
			pointers[t] = res.Pointer
		}
	}
	for i, e := range failed {
		tasks := failedBy[e]
		if len(tasks) == 1 {
			failed[i] = fmt.Sprintf("task %s: %s", tasks[0], e)
		} else {
			failed[i] = fmt.Sprintf("tasks %s: %s", strings.Join(tasks, ", "), e)
		}
	}
	var o cluster.Outcome
	switch {
	case len(failed) > 0:
		o.Err = strings.Join(failed, "; ")
	case req.Savepoints():
		manifest, err := m.writeManifest(req.Target, pointers)
		if err != nil {
			o.Err = err.Error()
		}
		o.Manifest = manifest
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(m.runCtx, stepTimeout) // the turn's may be spent
		defer cancel()
	}
	o, err := m.g.Finish(ctx, req.ID, o)
	if err != nil {
		m.log.Warn("finishing a request", "request", req.ID, "error", err)
		return
	}
	m.log.Info("request finished", "request", req.ID, "kind", req.Kind, "manifest", o.Manifest, "error", o.Err)
}

// stopFinished answers the end of the stop the member took part in: errJobStopped when it
// went well; when it failed, the tasks it stopped run again, and the member goes on.
func (m *member) stopFinished(ctx context.Context) error {
	id := m.stopping
	m.stopping = ""
	o, err := m.g.Outcome(ctx, id)
	if err == nil && o.Err == "" {
		return errJobStopped
	}
	m.log.Warn("the stop of the job failed: its tasks run on", "request", id, "outcome", o.Err, "error", err)
	for t, r := range m.running {
		if r.stopped || r.cancelled {
			<-r.done
			delete(m.running, t)
			if err := m.start(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// served asks the run for what req asks, the first time, and returns the outcome once
// there is one (ok false until then). A savepoint goes to the task's checkpoint
// coordinator; a stop without savepoint cancels the run, as runner stop cancels a job.
func (r *taskRun) served(req cluster.Request) (cluster.TaskResult, bool) {
	if r.stopped && req.Kind == cluster.RequestStop {
		return cluster.TaskResult{}, true // stopped before: nothing more to do
	}
	reply, asked := r.replies[req.ID]
	if !asked {
		if req.Kind == cluster.RequestStop && !req.Savepoint && !req.Drain {
			if !r.cancellable() {
				return cluster.TaskResult{}, false // asked again at the next turn
			}
			r.cancelled = true
			r.cancel(ErrJobCancelled)
			r.replies[req.ID] = nil
			return cluster.TaskResult{}, false
		}
		reply = make(chan dataflow.SavepointResult, 1)
		sp := dataflow.SavepointRequest{Target: req.Target, Stop: req.Kind == cluster.RequestStop, Drain: req.Drain, Reply: reply}
		select {
		case r.requests <- sp:
			r.replies[req.ID] = reply
		default: // the coordinator has not taken the requests before: ask at the next turn
		}
		return cluster.TaskResult{}, false
	}
	if reply == nil { // cancelled: done once the run ended
		if _, ended := r.result(); ended {
			return cluster.TaskResult{}, true
		}
		return cluster.TaskResult{}, false
	}
	select {
	case res := <-reply:
		if res.Err != nil {
			return cluster.TaskResult{Err: res.Err.Error()}, true
		}
		return cluster.TaskResult{Pointer: res.Location.ExternalPointer}, true
	default:
	}
	if err, ended := r.result(); ended && len(reply) == 0 {
		return cluster.TaskResult{Err: fmt.Sprintf("the task's run ended before it took the savepoint: %v", err)}, true
	}
	return cluster.TaskResult{}, false
}

package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Request kinds: what `runner savepoint` and `runner stop` ask of a distributed job.
const (
	// RequestSavepoint asks every task for a savepoint; the job goes on.
	RequestSavepoint = "savepoint"
	// RequestStop stops every task: with Savepoint after a savepoint, with Drain after
	// draining (Flink's stop --drain), else cancelled.
	RequestStop = "stop"
)

// Request is something asked of a whole distributed job, on key <job>.req.<id>: every
// member does it to the tasks it holds and reports each task's outcome (Report); once
// every task reported, the member holding the job's first task finishes the request
// (Finish), writing the savepoints' manifest when there are savepoints. A request is the
// job's, not a member's: a task that moves to another member while a request is open is
// served by its new holder, and a runner that joins meanwhile takes part.
type Request struct {
	ID   string    `json:"id"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// Target is the savepoints' directory ("": the configured savepoint directory).
	Target string `json:"target,omitempty"`
	// Savepoint and Drain say how a stop stops (see RequestStop).
	Savepoint bool `json:"savepoint,omitempty"`
	Drain     bool `json:"drain,omitempty"`
}

// Savepoints reports whether the request takes a savepoint of every task.
func (r Request) Savepoints() bool {
	return r.Kind == RequestSavepoint || r.Savepoint || r.Drain
}

// TaskResult is a task's outcome of a request: its savepoint's pointer, or why it failed
// ("" for a stop without savepoint that went well).
type TaskResult struct {
	Pointer string `json:"pointer,omitempty"`
	Err     string `json:"error,omitempty"`
	Member  string `json:"member"`
}

// Outcome is a finished request's answer: the manifest of the tasks' savepoints (a
// pointer the checkpoint storage resolves, which `runner run --from` restores), or why
// the request failed.
type Outcome struct {
	Manifest string `json:"manifest,omitempty"`
	Err      string `json:"error,omitempty"`
}

func requestPrefix(job string) string       { return job + ".req." }
func requestKey(job, id string) string      { return requestPrefix(job) + id }
func resultKey(job, id, task string) string { return requestKey(job, id) + ".task." + task }
func doneKey(job, id string) string         { return requestKey(job, id) + ".done" }
func bucketOf(ctx context.Context, js jetstream.JetStream, bucket, job string) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("KV bucket %s of job %q: %w", bucket, job, err)
	}
	return kv, nil
}

// Submit records r (its ID and At are set here) for the members of job's group on bucket
// and returns its id. It needs no membership: `runner savepoint` and `runner stop` submit
// from any machine that reaches NATS.
func Submit(ctx context.Context, js jetstream.JetStream, bucket, job string, r Request) (string, error) {
	kv, err := bucketOf(ctx, js, bucket, job)
	if err != nil {
		return "", err
	}
	if _, err := recordedTasks(ctx, kv, job, bucket); err != nil {
		return "", err
	}
	var raw [6]byte
	rand.Read(raw[:])
	r.ID, r.At = hex.EncodeToString(raw[:]), time.Now().UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	if _, err := kv.Create(ctx, requestKey(job, r.ID), b); err != nil {
		return "", fmt.Errorf("submit a %s request to job %q (KV bucket %s): %w", r.Kind, job, bucket, err)
	}
	return r.ID, nil
}

// Await waits until request id of job is finished and returns its outcome; ctx bounds
// the wait.
func Await(ctx context.Context, js jetstream.JetStream, bucket, job, id string) (Outcome, error) {
	kv, err := bucketOf(ctx, js, bucket, job)
	if err != nil {
		return Outcome{}, err
	}
	w, err := kv.Watch(ctx, doneKey(job, id))
	if err != nil {
		return Outcome{}, fmt.Errorf("watch request %s of job %q (KV bucket %s): %w", id, job, bucket, err)
	}
	defer w.Stop()
	for {
		select {
		case e := <-w.Updates():
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue // the end of the initial values, or a deletion
			}
			var o Outcome
			if err := json.Unmarshal(e.Value(), &o); err != nil {
				return Outcome{}, fmt.Errorf("the outcome of request %s of job %q does not decode: %w", id, job, err)
			}
			return o, nil
		case <-ctx.Done():
			return Outcome{}, fmt.Errorf("request %s of job %q has not finished: %w", id, job, context.Cause(ctx))
		}
	}
}

// Requests returns the job's open requests, oldest first: those not finished yet.
func (g *Group) Requests(ctx context.Context) ([]Request, error) {
	keys, err := listKeys(ctx, g.kv, requestPrefix(g.s.Job)+"*")
	if err != nil {
		return nil, fmt.Errorf("list the requests of job %q (KV bucket %s): %w", g.s.Job, g.s.Bucket, err)
	}
	var ids []string
	for _, key := range keys {
		ids = append(ids, strings.TrimPrefix(key, requestPrefix(g.s.Job)))
	}
	var out []Request
	for _, id := range ids {
		if e, err := g.get(ctx, doneKey(g.s.Job, id)); err == nil {
			if g.Finisher() && g.clock().Now().Sub(e.Stored) > keepFinished {
				g.forget(ctx, id)
			}
			continue
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("request %s of job %q: %w", id, g.s.Job, err)
		}
		e, err := g.get(ctx, requestKey(g.s.Job, id))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("request %s of job %q: %w", id, g.s.Job, err)
		}
		var r Request
		if err := json.Unmarshal(e.Value, &r); err != nil {
			g.log.Warn("a request of the job does not decode: ignored", "key", requestKey(g.s.Job, id), "error", err)
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Request) int { return a.At.Compare(b.At) })
	return out, nil
}

// Report records task's outcome of request id; the first report of a task stands.
func (g *Group) Report(ctx context.Context, id, task string, res TaskResult) error {
	res.Member = g.id
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := g.kv.Create(ctx, resultKey(g.s.Job, id, task), b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("report task %q of request %s of job %q: %w", task, id, g.s.Job, err)
	}
	return nil
}

// Results returns the outcomes of request id reported so far, by task.
func (g *Group) Results(ctx context.Context, id string) (map[string]TaskResult, error) {
	out := map[string]TaskResult{}
	for _, t := range g.s.Tasks {
		e, err := g.get(ctx, resultKey(g.s.Job, id, t))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("outcome of task %q of request %s of job %q: %w", t, id, g.s.Job, err)
		}
		var res TaskResult
		if err := json.Unmarshal(e.Value, &res); err != nil {
			return nil, fmt.Errorf("outcome of task %q of request %s of job %q does not decode: %w", t, id, g.s.Job, err)
		}
		out[t] = res
	}
	return out, nil
}

// Finish records the outcome of request id; the first one recorded stands, and Finish
// returns it.
func (g *Group) Finish(ctx context.Context, id string, o Outcome) (Outcome, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return o, err
	}
	if _, err := g.kv.Create(ctx, doneKey(g.s.Job, id), b); err == nil {
		return o, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return o, fmt.Errorf("finish request %s of job %q: %w", id, g.s.Job, err)
	}
	e, err := g.get(ctx, doneKey(g.s.Job, id))
	if err != nil {
		return o, fmt.Errorf("read the outcome of request %s of job %q: %w", id, g.s.Job, err)
	}
	var first Outcome
	if err := json.Unmarshal(e.Value, &first); err != nil {
		return o, fmt.Errorf("the outcome of request %s of job %q does not decode: %w", id, g.s.Job, err)
	}
	return first, nil
}

// Outcome returns the outcome of finished request id.
func (g *Group) Outcome(ctx context.Context, id string) (Outcome, error) {
	e, err := g.get(ctx, doneKey(g.s.Job, id))
	if err != nil {
		return Outcome{}, fmt.Errorf("read the outcome of request %s of job %q: %w", id, g.s.Job, err)
	}
	var o Outcome
	if err := json.Unmarshal(e.Value, &o); err != nil {
		return Outcome{}, fmt.Errorf("the outcome of request %s of job %q does not decode: %w", id, g.s.Job, err)
	}
	return o, nil
}

// Finisher reports whether this member finishes the job's requests: it holds the job's
// first task.
func (g *Group) Finisher() bool {
	_, ok := g.Lease(g.s.Tasks[0])
	return ok
}

// keepFinished is how long a finished request stays in the bucket, for `runner savepoint`
// and `runner stop` to read its outcome; the job's finisher removes it after.
const keepFinished = 10 * time.Minute

// forget removes request id of the job, its results and its outcome.
func (g *Group) forget(ctx context.Context, id string) {
	keys := []string{doneKey(g.s.Job, id), requestKey(g.s.Job, id)}
	for _, t := range g.s.Tasks {
		keys = append(keys, resultKey(g.s.Job, id, t))
	}
	for _, k := range keys {
		if err := g.kv.Purge(ctx, k); err != nil {
			g.log.Warn("removing a finished request", "key", k, "error", err)
			return
		}
	}
}

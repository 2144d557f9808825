package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A task whose run finished (its bounded input read to the end, its output committed) is
// marked finished on key <job>.finished.<task>, so that no member claims it again once
// its holder leaves the group, and so that every member, those holding no task too, sees
// when the whole job has finished. The marks belong to one run of the job: a member that
// joins a group with no other live member clears them, and the tasks of the new run
// resume from their latest checkpoints, as a job on one runner does.

// finishMark is the value of a task's finished mark.
type finishMark struct {
	Member string `json:"member"`
	Epoch  int64  `json:"epoch"`
}

func finishedPrefix(job string) string    { return job + ".finished." }
func finishedKey(job, task string) string { return finishedPrefix(job) + task }

// MarkFinished records that task, which the member holds, finished. A member whose lease
// of the task is no longer valid marks nothing: the task's new holder runs it.
func (g *Group) MarkFinished(ctx context.Context, task string) error {
	l, ok := g.Lease(task)
	if !ok {
		return fmt.Errorf("task %q of job %q: not held by member %s", task, g.s.Job, g.id)
	}
	if err := l.Check(); err != nil {
		return fmt.Errorf("task %q of job %q: %w", task, g.s.Job, err)
	}
	b, err := json.Marshal(finishMark{Member: g.id, Epoch: l.Record().Epoch})
	if err != nil {
		return err
	}
	if _, err := g.kv.Put(ctx, finishedKey(g.s.Job, task), b); err != nil {
		return fmt.Errorf("mark task %q of job %q finished (KV bucket %s): %w", task, g.s.Job, g.s.Bucket, err)
	}
	return nil
}

// Finished returns the tasks of the job marked finished.
func (g *Group) Finished(ctx context.Context) (map[string]bool, error) {
	marks, err := finishMarks(ctx, g.kv, g.s.Job)
	if err != nil {
		return nil, fmt.Errorf("the finished tasks of job %q (KV bucket %s): %w", g.s.Job, g.s.Bucket, err)
	}
	out := make(map[string]bool, len(marks))
	for t := range marks {
		out[t] = true
	}
	return out, nil
}

// finishMarks returns the finished marks of job's tasks, by task.
func finishMarks(ctx context.Context, kv jetstream.KeyValue, job string) (map[string]finishMark, error) {
	prefix := finishedPrefix(job)
	keys, err := listKeys(ctx, kv, prefix+"*")
	if err != nil {
		return nil, err
	}
	out := map[string]finishMark{}
	for _, key := range keys {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // cleared since it was listed
		}
		if err != nil {
			return nil, err
		}
		var m finishMark
		json.Unmarshal(e.Value(), &m) // a mark that does not decode still marks its task
		out[strings.TrimPrefix(key, prefix)] = m
	}
	return out, nil
}

// clearFinished deletes the finished marks of the job's last run.
func (g *Group) clearFinished(ctx context.Context) error {
	marks, err := finishMarks(ctx, g.kv, g.s.Job)
	if err != nil {
		return fmt.Errorf("the finished tasks of job %q (KV bucket %s): %w", g.s.Job, g.s.Bucket, err)
	}
	for t := range marks {
		if err := g.kv.Delete(ctx, finishedKey(g.s.Job, t)); err != nil {
			return fmt.Errorf("clear the finished mark of task %q of job %q (KV bucket %s): %w", t, g.s.Job, g.s.Bucket, err)
		}
	}
	if len(marks) > 0 {
		g.log.Info("a new run of the job: its tasks' finished marks cleared", "job", g.s.Job, "tasks", len(marks))
	}
	return nil
}

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/sdk"
)

// Task states a member reports.
const (
	TaskRunning    = "RUNNING"
	TaskHandingOff = "HANDING_OVER"
	TaskFinished   = "FINISHED"
	TaskStopped    = "STOPPED"
)

// MemberStatus is what a member says of itself and of the tasks it runs, on key
// <job>.status.<member> (Publish): what `runner status` and the web page of any member
// show of the whole job.
type MemberStatus struct {
	Member  string       `json:"member"`
	Host    string       `json:"host"`
	Pid     int          `json:"pid"`
	Control string       `json:"control,omitempty"`
	Started time.Time    `json:"started"`
	Updated time.Time    `json:"updated"`
	Tasks   []TaskStatus `json:"tasks"`
}

// TaskStatus is a task as the member running it reports it.
type TaskStatus struct {
	Task  string `json:"task"`
	State string `json:"state"`
	// Epoch is the task's fencing token: its lease's epoch.
	Epoch int64 `json:"epoch"`
	// RecordsIn counts the records its source read in the current run; Lag the records
	// its source has not read yet (-1: not known).
	RecordsIn int64 `json:"records_in"`
	Lag       int64 `json:"lag"`
	// Restored is the pointer of the checkpoint or savepoint its run restored ("": none).
	Restored string `json:"restored,omitempty"`
	// LastCheckpoint is its newest completed checkpoint (nil: none yet).
	LastCheckpoint *CheckpointStatus `json:"last_checkpoint,omitempty"`
}

// CheckpointStatus is a completed checkpoint of a task.
type CheckpointStatus struct {
	ID       int64     `json:"id"`
	Time     time.Time `json:"time"`
	Pointer  string    `json:"pointer"`
	Duration int64     `json:"duration_ms"`
	Bytes    int64     `json:"bytes"`
}

func statusKey(job, member string) string { return job + ".status." + member }

// Publish records the member's status. Members publish theirs every few seconds; a
// member's status counts only while its member lease is live (View).
func (g *Group) Publish(ctx context.Context, s MemberStatus) error {
	s.Member = g.id
	s.Host, s.Pid, s.Control = g.holder.Host, g.holder.PID, g.s.Control
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err := g.kv.Put(ctx, statusKey(g.s.Job, g.id), b); err != nil {
		return fmt.Errorf("publish the status of member %s of job %q (KV bucket %s): %w", g.id, g.s.Job, g.s.Bucket, err)
	}
	return nil
}

// View is the whole job as its group's KV bucket holds it: every live member with what it
// reports, and every task with the member whose lease holds it.
type View struct {
	Job     string
	Members []MemberView
	// Tasks are every task of the job, in the job's order.
	Tasks []TaskView
}

// MemberView is a live member: its record, and its last status (zero if it has
// published none yet).
type MemberView struct {
	ID      string
	Holder  ownership.Holder
	Renewed time.Time
	Status  MemberStatus
}

// TaskView is a task: who holds its lease (Member "" when none does: free, or its holder
// died and its lease has not expired yet when Expires is set), and what that member last
// reported of it (nil when nothing; state FINISHED alone for a finished task no member
// holds).
type TaskView struct {
	Task    string
	Member  string
	Epoch   int64
	Expires time.Time
	Status  *TaskStatus
}

// ReadView reads the view of job from its group's bucket, without joining the group:
// `runner status` in distributed mode. tasks are the job's tasks (nil: those the group's
// first member recorded).
func ReadView(ctx context.Context, js jetstream.JetStream, bucket, job string) (View, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return View{}, fmt.Errorf("KV bucket %s of job %q: %w", bucket, job, err)
	}
	tasks, err := recordedTasks(ctx, kv, job, bucket)
	if err != nil {
		return View{}, err
	}
	return readView(ctx, kv, bucket, job, tasks, time.Now())
}

// View reads the view of the member's job.
func (g *Group) View(ctx context.Context) (View, error) {
	return readView(ctx, g.kv, g.s.Bucket, g.s.Job, g.s.Tasks, g.clock().Now())
}

// recordedTasks returns the task list the group's first member recorded.
func recordedTasks(ctx context.Context, kv jetstream.KeyValue, job, bucket string) ([]string, error) {
	e, err := kv.Get(ctx, job+".config")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("job %q has no group on KV bucket %s: no runner of it has joined in distributed mode", job, bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("read the settings of job %q on KV bucket %s: %w", job, bucket, err)
	}
	var settings map[string]string
	if err := json.Unmarshal(e.Value(), &settings); err != nil {
		return nil, fmt.Errorf("the settings of job %q on KV bucket %s do not decode: %w", job, bucket, err)
	}
	return strings.Split(settings["tasks"], ","), nil
}

func readView(ctx context.Context, kv jetstream.KeyValue, bucket, job string, tasks []string, now time.Time) (View, error) {
	v := View{Job: job}
	prefix := memberPrefix(job)
	keys, err := listKeys(ctx, kv, prefix+"*")
	if err != nil {
		return v, fmt.Errorf("list the members of job %q (KV bucket %s): %w", job, bucket, err)
	}
	slices.Sort(keys)
	for _, key := range keys {
		id := strings.TrimPrefix(key, prefix)
		rec, live, err := readRecord(ctx, kvRecord{kv, key}, now)
		if err != nil {
			return v, fmt.Errorf("member %s of job %q: %w", id, job, err)
		}
		if !live {
			continue
		}
		m := MemberView{ID: id, Holder: rec.Holder, Renewed: rec.Renewed}
		if e, err := kv.Get(ctx, statusKey(job, id)); err == nil {
			json.Unmarshal(e.Value(), &m.Status)
		}
		v.Members = append(v.Members, m)
	}
	marks, err := finishMarks(ctx, kv, job)
	if err != nil {
		return v, fmt.Errorf("the finished tasks of job %q (KV bucket %s): %w", job, bucket, err)
	}
	for _, t := range tasks {
		tv := TaskView{Task: t}
		rec, live, err := readRecord(ctx, kvRecord{kv, taskKey(job, t)}, now)
		if err != nil {
			return v, fmt.Errorf("task %q of job %q: %w", t, job, err)
		}
		if live {
			tv.Epoch, tv.Expires = rec.Epoch, rec.Expires()
			if dead, _ := ownership.Dead(rec.Holder, rec.Renewed); !dead {
				tv.Member = rec.Member
			}
		}
		for i := range v.Members {
			if v.Members[i].ID != tv.Member {
				continue
			}
			for j := range v.Members[i].Status.Tasks {
				if s := &v.Members[i].Status.Tasks[j]; s.Task == t {
					tv.Status = s
				}
			}
		}
		if m, ok := marks[t]; ok && tv.Status == nil {
			tv.Status = &TaskStatus{Task: t, State: TaskFinished, Epoch: m.Epoch, Lag: -1}
			tv.Epoch = max(tv.Epoch, m.Epoch)
		}
		v.Tasks = append(v.Tasks, tv)
	}
	return v, nil
}

// kvRecord reads a lease record straight from the bucket, for a view of the group: the
// sdk.LeaseStore of readRecord, which writes nothing.
type kvRecord struct {
	kv  jetstream.KeyValue
	key string
}

// ReadLease implements sdk.LeaseStore.
func (r kvRecord) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	e, err := r.kv.Get(ctx, r.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return sdk.LeaseRecord{}, fmt.Errorf("key %s: %w", r.key, sdk.ErrNotFound)
	}
	if err != nil {
		return sdk.LeaseRecord{}, err
	}
	return sdk.LeaseRecord{Data: e.Value(), Version: strconv.FormatUint(e.Revision(), 10)}, nil
}

// WriteLease implements sdk.LeaseStore: a view writes nothing.
func (r kvRecord) WriteLease(context.Context, []byte, string) (string, error) {
	return "", fmt.Errorf("key %s: a view of the group writes no lease: %w", r.key, sdk.ErrUnsupported)
}

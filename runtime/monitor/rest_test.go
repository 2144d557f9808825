package monitor

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// TestCheckpointsREST feeds the scenario and checks GET /jobs/orders/checkpoints field by
// field, as Flink's REST API names them, against values computed from the scenario.
func TestCheckpointsREST(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	m := startJob(clock)
	srv := serve(t, m)
	restoreAt := start.Add(5 * time.Second)
	m.RestoredFrom(42, restoreAt, "file:///savepoints/savepoint-42", true)
	for _, e := range testCheckpoints {
		feed(m, start, e)
	}
	m.CheckpointDiscarded(1)

	v := getJSONT(t, srv.URL+"/jobs/orders/checkpoints", http.StatusOK)

	var completed, failed, inProgress int
	var durations, sizes, added []int64
	var lastCompleted, lastSavepoint, lastFailed cpEvent
	for _, e := range testCheckpoints {
		switch {
		case e.took == 0:
			inProgress++
		case e.fail != "":
			failed++
			lastFailed = e
		default:
			completed++
			durations = append(durations, e.took.Milliseconds())
			sizes = append(sizes, e.full)
			added = append(added, e.added)
			if e.kind == dataflow.KindCheckpoint {
				lastCompleted = e
			} else {
				lastSavepoint = e
			}
		}
	}
	for field, want := range map[string]int{
		"restored": 1, "total": len(testCheckpoints), "in_progress": inProgress, "completed": completed, "failed": failed,
	} {
		if got := num(t, v, "counts", field); got != float64(want) {
			t.Errorf("counts.%s = %v, want %d", field, got, want)
		}
	}
	for field, vals := range map[string][]int64{"end_to_end_duration": durations, "state_size": sizes, "checkpointed_size": added} {
		lo, hi := slices.Min(vals), slices.Max(vals)
		var sum int64
		for _, x := range vals {
			sum += x
		}
		if got := num(t, v, "summary", field, "min"); got != float64(lo) {
			t.Errorf("summary.%s.min = %v, want %d", field, got, lo)
		}
		if got := num(t, v, "summary", field, "max"); got != float64(hi) {
			t.Errorf("summary.%s.max = %v, want %d", field, got, hi)
		}
		if got := num(t, v, "summary", field, "avg"); got != float64(sum/int64(len(vals))) {
			t.Errorf("summary.%s.avg = %v, want %d", field, got, sum/int64(len(vals)))
		}
	}
	for _, field := range []string{"alignment_buffered", "processed_data", "persisted_data"} {
		if got := num(t, v, "summary", field, "max"); got != 0 {
			t.Errorf("summary.%s.max = %v, want 0 (not measured)", field, got)
		}
	}

	checkEntry := func(where string, e cpEvent) {
		t.Helper()
		entry := jpath(t, v, splitPath(where)...)
		if got := num(t, entry, "id"); got != float64(e.id) {
			t.Errorf("%s.id = %v, want %d", where, got, e.id)
		}
		if got, want := num(t, entry, "trigger_timestamp"), float64(start.Add(e.at).UnixMilli()); got != want {
			t.Errorf("%s.trigger_timestamp = %v, want %v", where, got, want)
		}
		if got := str(t, entry, "status"); got != wantStatus(e) {
			t.Errorf("%s.status = %q, want %q", where, got, wantStatus(e))
		}
		if got := jpath(t, entry, "is_savepoint"); got != (e.kind != dataflow.KindCheckpoint) {
			t.Errorf("%s.is_savepoint = %v", where, got)
		}
		wantSize, wantAdded := e.full, e.added
		if e.fail != "" || e.took == 0 {
			wantSize, wantAdded = 0, 0
			for _, a := range e.acks {
				wantSize += a.size
				wantAdded += a.added
			}
		}
		if got := num(t, entry, "state_size"); got != float64(wantSize) {
			t.Errorf("%s.state_size = %v, want %d", where, got, wantSize)
		}
		if got := num(t, entry, "checkpointed_size"); got != float64(wantAdded) {
			t.Errorf("%s.checkpointed_size = %v, want %d", where, got, wantAdded)
		}
		wantDur := e.took.Milliseconds()
		if e.took == 0 {
			wantDur = maxAfter(e).Milliseconds()
		}
		if got := num(t, entry, "end_to_end_duration"); got != float64(wantDur) {
			t.Errorf("%s.end_to_end_duration = %v, want %d", where, got, wantDur)
		}
		if got, want := num(t, entry, "latest_ack_timestamp"), float64(start.Add(e.at+maxAfter(e)).UnixMilli()); got != want {
			t.Errorf("%s.latest_ack_timestamp = %v, want %v", where, got, want)
		}
		if got := num(t, entry, "num_subtasks"); got != 4 {
			t.Errorf("%s.num_subtasks = %v, want 4", where, got)
		}
		if got := num(t, entry, "num_acknowledged_subtasks"); got != float64(len(e.acks)) {
			t.Errorf("%s.num_acknowledged_subtasks = %v, want %d", where, got, len(e.acks))
		}
		wantType := map[dataflow.CheckpointKind]string{dataflow.KindCheckpoint: "CHECKPOINT", dataflow.KindSavepoint: "SAVEPOINT", dataflow.KindSyncSavepoint: "SYNC_SAVEPOINT"}[e.kind]
		if got := str(t, entry, "checkpoint_type"); got != wantType {
			t.Errorf("%s.checkpoint_type = %q, want %q", where, got, wantType)
		}
		switch wantStatus(e) {
		case "COMPLETED":
			if got := str(t, entry, "external_path"); got != e.path() {
				t.Errorf("%s.external_path = %q, want %q", where, got, e.path())
			}
			if got := str(t, entry, "className"); got != "completed" {
				t.Errorf("%s.className = %q", where, got)
			}
			if got := jpath(t, entry, "discarded"); got != (e.id == 1) {
				t.Errorf("%s.discarded = %v, want %v", where, got, e.id == 1)
			}
		case "FAILED":
			if got := str(t, entry, "failure_message"); got != e.fail {
				t.Errorf("%s.failure_message = %q, want %q", where, got, e.fail)
			}
			if got, want := num(t, entry, "failure_timestamp"), float64(start.Add(e.at+e.took).UnixMilli()); got != want {
				t.Errorf("%s.failure_timestamp = %v, want %v", where, got, want)
			}
			if got := str(t, entry, "className"); got != "failed" {
				t.Errorf("%s.className = %q", where, got)
			}
		}
	}
	checkEntry("latest.completed", lastCompleted)
	checkEntry("latest.savepoint", lastSavepoint)
	checkEntry("latest.failed", lastFailed)
	if got := num(t, v, "latest", "restored", "id"); got != 42 {
		t.Errorf("latest.restored.id = %v, want 42", got)
	}
	if got := num(t, v, "latest", "restored", "restore_timestamp"); got != float64(restoreAt.UnixMilli()) {
		t.Errorf("latest.restored.restore_timestamp = %v, want %v", got, restoreAt.UnixMilli())
	}
	if got := jpath(t, v, "latest", "restored", "is_savepoint"); got != true {
		t.Errorf("latest.restored.is_savepoint = %v, want true", got)
	}

	hist := jpath(t, v, "history").([]any)
	if len(hist) != len(testCheckpoints) {
		t.Fatalf("history has %d entries, want %d", len(hist), len(testCheckpoints))
	}
	for i := range hist {
		// Newest first.
		checkEntry(fmt.Sprintf("history.%d", i), testCheckpoints[len(testCheckpoints)-1-i])
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func wantStatus(e cpEvent) string {
	switch {
	case e.took == 0:
		return "IN_PROGRESS"
	case e.fail != "":
		return "FAILED"
	}
	return "COMPLETED"
}

func maxAfter(e cpEvent) time.Duration {
	var d time.Duration
	for _, a := range e.acks {
		d = max(d, a.after)
	}
	return d
}

// TestCheckpointDetailsREST checks the per-task and per-subtask answers: the synchronous
// and asynchronous parts, alignment and start delay of every subtask, in milliseconds.
func TestCheckpointDetailsREST(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	m := startJob(clock)
	srv := serve(t, m)
	for _, e := range testCheckpoints {
		feed(m, start, e)
	}
	for _, e := range testCheckpoints {
		base := fmt.Sprintf("%s/jobs/orders/checkpoints/details/%d", srv.URL, e.id)
		d := getJSONT(t, base, http.StatusOK)
		if got := str(t, d, "status"); got != wantStatus(e) {
			t.Errorf("checkpoint %d: status %q, want %q", e.id, got, wantStatus(e))
		}
		for _, task := range testTasks {
			var acked int
			var size int64
			for _, a := range e.acks {
				if a.task == task.ID {
					acked++
					size += a.size
				}
			}
			if got := num(t, d, "tasks", task.ID, "num_acknowledged_subtasks"); got != float64(acked) {
				t.Errorf("checkpoint %d task %s: num_acknowledged_subtasks %v, want %d", e.id, task.ID, got, acked)
			}
			if got := num(t, d, "tasks", task.ID, "state_size"); got != float64(size) {
				t.Errorf("checkpoint %d task %s: state_size %v, want %d", e.id, task.ID, got, size)
			}
			sub := getJSONT(t, base+"/subtasks/"+task.ID, http.StatusOK)
			subs := jpath(t, sub, "subtasks").([]any)
			if len(subs) != task.Parallelism {
				t.Fatalf("checkpoint %d task %s: %d subtasks, want %d", e.id, task.ID, len(subs), task.Parallelism)
			}
			var syncs []int64
			for i := range task.Parallelism {
				var ack *ackEvent
				for j := range e.acks {
					if e.acks[j].task == task.ID && e.acks[j].subtask == i {
						ack = &e.acks[j]
					}
				}
				s := subs[i]
				if ack == nil {
					if got := str(t, s, "status"); got != "pending_or_failed" {
						t.Errorf("checkpoint %d %s/%d: status %q, want pending_or_failed", e.id, task.ID, i, got)
					}
					continue
				}
				syncs = append(syncs, ack.sync.Milliseconds())
				for _, c := range []struct {
					keys []string
					want int64
				}{
					{[]string{"index"}, int64(i)},
					{[]string{"checkpoint", "sync"}, ack.sync.Milliseconds()},
					{[]string{"checkpoint", "async"}, ack.async.Milliseconds()},
					{[]string{"alignment", "duration"}, ack.align.Milliseconds()},
					{[]string{"start_delay"}, ack.wait.Milliseconds()},
					{[]string{"state_size"}, ack.size},
					{[]string{"checkpointed_size"}, ack.added},
					{[]string{"end_to_end_duration"}, ack.after.Milliseconds()},
					{[]string{"ack_timestamp"}, start.Add(e.at + ack.after).UnixMilli()},
				} {
					if got := num(t, s, c.keys...); got != float64(c.want) {
						t.Errorf("checkpoint %d %s/%d: %v = %v, want %d", e.id, task.ID, i, c.keys, got, c.want)
					}
				}
				if got := str(t, s, "status"); got != "completed" {
					t.Errorf("checkpoint %d %s/%d: status %q, want completed", e.id, task.ID, i, got)
				}
			}
			if len(syncs) > 0 {
				if got := num(t, sub, "summary", "checkpoint_duration", "sync", "max"); got != float64(slices.Max(syncs)) {
					t.Errorf("checkpoint %d %s: summary sync max %v, want %d", e.id, task.ID, got, slices.Max(syncs))
				}
			}
		}
	}
	getJSONT(t, srv.URL+"/jobs/orders/checkpoints/details/999", http.StatusNotFound)
	getJSONT(t, srv.URL+"/jobs/orders/checkpoints/details/x", http.StatusBadRequest)
	getJSONT(t, srv.URL+"/jobs/orders/checkpoints/details/1/subtasks/nosuchtask", http.StatusNotFound)
	e := getJSONT(t, srv.URL+"/jobs/other/checkpoints", http.StatusNotFound)
	if msgs := jpath(t, e, "errors").([]any); len(msgs) != 1 {
		t.Errorf("error answer %v: want one message in errors", e)
	}
}

// TestHistoryKeepsTheNewest: the history keeps Options.HistorySize checkpoints, the
// newest; the latest of each kind and the counts stay.
func TestHistoryKeepsTheNewest(t *testing.T) {
	clock := newFakeClock()
	m := New("orders", Options{Clock: clock.Now, HistorySize: 3})
	m.JobStarted(JobInfo{Tasks: testTasks})
	srv := serve(t, m)
	start := clock.Now()
	for _, e := range testCheckpoints {
		feed(m, start, e)
	}
	v := getJSONT(t, srv.URL+"/jobs/orders/checkpoints", http.StatusOK)
	hist := jpath(t, v, "history").([]any)
	var ids []float64
	for _, h := range hist {
		ids = append(ids, num(t, h, "id"))
	}
	n := len(testCheckpoints)
	want := []float64{float64(testCheckpoints[n-1].id), float64(testCheckpoints[n-2].id), float64(testCheckpoints[n-3].id)}
	if !slices.Equal(ids, want) {
		t.Errorf("history ids %v, want %v", ids, want)
	}
	if got := num(t, v, "counts", "total"); got != float64(n) {
		t.Errorf("counts.total = %v, want %d", got, n)
	}
	if got := num(t, v, "latest", "completed", "id"); got != 5 {
		t.Errorf("latest.completed.id = %v, want 5", got)
	}
	// Checkpoint 1 left the history: its details are gone, as in Flink.
	getJSONT(t, srv.URL+"/jobs/orders/checkpoints/details/1", http.StatusNotFound)
}

// TestJobREST checks GET /jobs/orders, /jobs/overview and /checkpoints/config.
func TestJobREST(t *testing.T) {
	clock := newFakeClock()
	created := clock.Now()
	m := startJob(clock)
	srv := serve(t, m)
	in := m.Subtask("count", 1)
	in.RecordsIn(300)
	in.RecordsIn(200)
	m.Subtask("count", 0).RecordsOut(77)
	m.Subtask("count", 0).SetStateSize(4096)
	m.Subtask("source", 0).RecordsOut(1000)
	m.Subtask("sink", 0).RecordsIn(77)
	m.PluginRestarted("hashmap", 777)
	clock.Advance(75 * time.Second)

	v := getJSONT(t, srv.URL+"/jobs/orders", http.StatusOK)
	for k, want := range map[string]string{"jid": "orders", "name": "orders", "state": "RUNNING", "flowstate-type": "aggregate", "job-type": "STREAMING"} {
		if got := str(t, v, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := num(t, v, "uptime"); got != 75_000 {
		t.Errorf("uptime = %v, want 75000", got)
	}
	if got := num(t, v, "start-time"); got != float64(created.UnixMilli()) {
		t.Errorf("start-time = %v, want %v", got, created.UnixMilli())
	}
	if got := num(t, v, "end-time"); got != -1 {
		t.Errorf("end-time = %v, want -1", got)
	}
	if got := num(t, v, "maxParallelism"); got != 128 {
		t.Errorf("maxParallelism = %v, want 128", got)
	}
	plugins := jpath(t, v, "plugins").([]any)
	if len(plugins) != len(testPlugins) {
		t.Fatalf("plugins: %v", plugins)
	}
	for i, p := range testPlugins {
		pid := p.Pid
		restarts := 0.0
		if p.Name == "hashmap" {
			pid, restarts = 777, 1
		}
		if got := str(t, plugins[i], "name"); got != p.Name {
			t.Errorf("plugins.%d.name = %q, want %q", i, got, p.Name)
		}
		if got := num(t, plugins[i], "pid"); got != float64(pid) {
			t.Errorf("plugin %s pid = %v, want %d", p.Name, got, pid)
		}
		if got := str(t, plugins[i], "version"); got != p.Version {
			t.Errorf("plugin %s version = %q, want %q", p.Name, got, p.Version)
		}
		if got := num(t, plugins[i], "restarts"); got != restarts {
			t.Errorf("plugin %s restarts = %v, want %v", p.Name, got, restarts)
		}
	}
	vertices := jpath(t, v, "vertices").([]any)
	wantVertices := []struct {
		id        string
		in, out   float64
		parallel  float64
		stateSize float64
	}{{"source", 0, 1000, 2, -1}, {"count", 500, 77, 2, 4096}, {"sink", 77, 0, 1, -1}}
	if len(vertices) != len(wantVertices) {
		t.Fatalf("vertices: %d, want %d", len(vertices), len(wantVertices))
	}
	for i, w := range wantVertices {
		vx := vertices[i]
		if got := str(t, vx, "id"); got != w.id {
			t.Errorf("vertices.%d.id = %q, want %q", i, got, w.id)
		}
		if got := num(t, vx, "metrics", "read-records"); got != w.in {
			t.Errorf("vertex %s read-records = %v, want %v", w.id, got, w.in)
		}
		if got := num(t, vx, "metrics", "write-records"); got != w.out {
			t.Errorf("vertex %s write-records = %v, want %v", w.id, got, w.out)
		}
		if got := num(t, vx, "parallelism"); got != w.parallel {
			t.Errorf("vertex %s parallelism = %v, want %v", w.id, got, w.parallel)
		}
		// 75 s after the counts: the 60 s window holds all of them.
		if got, want := num(t, vx, "read-records-per-second"), w.in/75; math.Abs(got-want) > 1e-9 && w.in > 0 {
			t.Errorf("vertex %s read-records-per-second = %v, want %v", w.id, got, want)
		}
	}
	if got := num(t, vertices[1], "subtasks", "0", "state-size"); got != 4096 {
		t.Errorf("count/0 state-size = %v, want 4096", got)
	}
	if got := num(t, vertices[1], "subtasks", "1", "state-size"); got != -1 {
		t.Errorf("count/1 state-size = %v, want -1 (unknown)", got)
	}

	ov := getJSONT(t, srv.URL+"/jobs/overview", http.StatusOK)
	if got := str(t, ov, "jobs", "0", "jid"); got != "orders" {
		t.Errorf("overview jid = %q", got)
	}
	cfg := getJSONT(t, srv.URL+"/jobs/orders/checkpoints/config", http.StatusOK)
	for k, want := range map[string]float64{
		"interval": float64(testSettings.Interval.Milliseconds()), "timeout": float64(testSettings.Timeout.Milliseconds()),
		"tolerable_failed_checkpoints": float64(testSettings.TolerableFailed), "max_concurrent": 1, "num_retained": 2,
	} {
		if got := num(t, cfg, k); got != want {
			t.Errorf("config.%s = %v, want %v", k, got, want)
		}
	}
	for k, want := range map[string]string{"mode": "exactly_once", "state_backend": "hashmap", "checkpoint_storage": "fsstorage"} {
		if got := str(t, cfg, k); got != want {
			t.Errorf("config.%s = %q, want %q", k, got, want)
		}
	}
	getJSONT(t, srv.URL+"/jobs/nosuchjob", http.StatusNotFound)
}

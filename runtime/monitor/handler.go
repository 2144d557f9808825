package monitor

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed web
var webFiles embed.FS

// Handler serves the Monitor over HTTP:
//
//	GET /metrics                                            Prometheus text format
//	GET /jobs, /jobs/overview                               the job (Flink's job list shapes)
//	GET /jobs/<job>                                         JobDetails
//	GET /jobs/<job>/checkpoints                             CheckpointingStatistics
//	GET /jobs/<job>/checkpoints/config                      CheckpointConfigInfo
//	GET /jobs/<job>/checkpoints/details/<id>                CheckpointStatistics
//	GET /jobs/<job>/checkpoints/details/<id>/subtasks/<task> TaskCheckpointDetails
//	GET /                                                   the web page (and /web/...)
//
// The control endpoint mounts it beside its own routes; its paths are relative, so it may
// also be mounted under a prefix with http.StripPrefix.
func Handler(m *Monitor) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: nil}))
	mux.HandleFunc("GET /jobs", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		state := m.state
		m.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"jobs": []map[string]string{{"id": m.job, "status": state}}})
	})
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.overview())
	})
	job := func(h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if name := r.PathValue("job"); name != m.job {
				writeError(w, http.StatusNotFound, fmt.Sprintf("job %q not found: this runner runs job %q", name, m.job))
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /jobs/{job}", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.Details())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.Checkpoints())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/config", job(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.CheckpointConfig())
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/details/{id}", job(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkpointID(w, r)
		if !ok {
			return
		}
		v, ok := m.Checkpoint(id)
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("checkpoint %d is not in the job's checkpoint history", id))
			return
		}
		writeJSON(w, http.StatusOK, v)
	}))
	mux.HandleFunc("GET /jobs/{job}/checkpoints/details/{id}/subtasks/{task}", job(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkpointID(w, r)
		if !ok {
			return
		}
		v, ok := m.TaskCheckpoint(id, r.PathValue("task"))
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("checkpoint %d of task %q is not in the job's checkpoint history", id, r.PathValue("task")))
			return
		}
		writeJSON(w, http.StatusOK, v)
	}))
	web, _ := fs.Sub(webFiles, "web")
	static := http.FileServerFS(web)
	mux.Handle("GET /web/", http.StripPrefix("/web", static))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, web, "index.html")
	})
	return mux
}

func checkpointID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpoint id %q: not a number", r.PathValue("id")))
		return 0, false
	}
	return id, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorResponse{Errors: []string{msg}})
}

// Checkpoints returns the checkpoint statistics (GET /jobs/<job>/checkpoints).
func (m *Monitor) Checkpoints() CheckpointingStatistics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cps.statistics()
}

// Checkpoint returns checkpoint id's statistics, if it is in the history or the latest of
// its kind.
func (m *Monitor) Checkpoint(id int64) (CheckpointStatistics, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.find(id)
	if c == nil {
		return CheckpointStatistics{}, false
	}
	return c.view(), true
}

// TaskCheckpoint returns task's part of checkpoint id with each subtask's.
func (m *Monitor) TaskCheckpoint(id int64, task string) (TaskCheckpointDetails, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.find(id)
	if c == nil {
		return TaskCheckpointDetails{}, false
	}
	for _, t := range c.taskIDs() {
		if t == task {
			return c.task(task), true
		}
	}
	return TaskCheckpointDetails{}, false
}

// find returns checkpoint id from the history or the latest ones.
func (cs *checkpoints) find(id int64) *cpStats {
	if c := cs.byID[id]; c != nil {
		return c
	}
	for _, c := range []*cpStats{cs.latestCompleted, cs.latestSavepoint, cs.latestFailed} {
		if c != nil && c.id == id {
			return c
		}
	}
	return nil
}

// CheckpointConfig returns the job's checkpointing settings (GET
// /jobs/<job>/checkpoints/config).
func (m *Monitor) CheckpointConfig() CheckpointConfigInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.info.Checkpointing
	return CheckpointConfigInfo{
		Mode: "exactly_once", Interval: s.Interval.Milliseconds(), Timeout: s.Timeout.Milliseconds(),
		MaxConcurrent: 1,
		// Completed checkpoints stay in the storage when the job is cancelled.
		Externalization: ExternalizedCheckpointInfo{Enabled: true, DeleteOnCancellation: false},
		StateBackend:    s.StateBackend, CheckpointStorage: s.CheckpointStorage,
		TolerableFailedCheckpoints: s.TolerableFailed, CheckpointsAfterTasksFinish: true,
		Incremental: s.Incremental, NumRetained: s.NumRetained,
	}
}

// Details returns the job's details (GET /jobs/<job>).
func (m *Monitor) Details() JobDetails {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sampleLocked(now)
	start := m.timestamps[JobInitializing]
	end, duration := int64(-1), now.Sub(start)
	if !m.ended.IsZero() {
		end, duration = millis(m.ended), m.ended.Sub(start)
	}
	d := JobDetails{
		JID: m.job, Name: m.job, State: m.state, JobType: "STREAMING",
		StartTime: millis(start), EndTime: end, Duration: duration.Milliseconds(),
		MaxParallelism: int64(m.info.MaxParallelism), Now: millis(now),
		Timestamps: map[string]int64{}, StatusCounts: map[string]int{},
		Uptime: m.uptime(now), NumRestarts: m.restarts,
		Type: m.info.Type, ConfigFile: m.info.ConfigFile, Plugins: m.sortedPlugins(),
		Vertices: []VertexDetails{},
	}
	for s, t := range m.timestamps {
		d.Timestamps[s] = millis(t)
	}
	status := executionState(m.state)
	for _, op := range m.opOrder {
		v := m.vertex(op, now, status, start, end, d.Duration)
		d.StatusCounts[status] += v.Parallelism
		d.Vertices = append(d.Vertices, v)
	}
	return d
}

// vertex returns operator op's details at now; m.mu is held.
func (m *Monitor) vertex(op string, now time.Time, status string, start time.Time, end, duration int64) VertexDetails {
	v := VertexDetails{
		ID: op, Name: op, MaxParallelism: m.info.MaxParallelism, Status: status,
		StartTime: millis(start), EndTime: end, Duration: duration,
		Metrics:  IOMetrics{ReadRecordsComplete: true, WriteRecordsComplete: true},
		Subtasks: m.subtaskMetrics(op, now),
	}
	for _, t := range m.info.Tasks {
		if t.ID == op {
			v.Name, v.Parallelism = t.Name, t.Parallelism
		}
	}
	for _, s := range v.Subtasks {
		v.Parallelism = max(v.Parallelism, s.Subtask+1)
		v.Metrics.ReadRecords += s.ReadRecords
		v.Metrics.WriteRecords += s.WriteRecords
		v.ReadRecordsPerSecond += s.ReadRecordsPerSecond
		v.WriteRecordsPerSecond += s.WriteRecordsPerSecond
	}
	if v.Name == "" {
		v.Name = op
	}
	v.Tasks = map[string]int{status: v.Parallelism}
	return v
}

// executionState returns the state of the job's subtasks while the job is in state
// (Flink's ExecutionState).
func executionState(state string) string {
	switch state {
	case JobRunning, JobFinished, JobFailed:
		return state
	case JobCanceled:
		return "CANCELED"
	case JobRestarting:
		return "CANCELING"
	}
	return "CREATED"
}

// overview returns GET /jobs/overview.
func (m *Monitor) overview() JobsOverview {
	d := m.Details()
	return JobsOverview{Jobs: []JobOverview{{
		JID: d.JID, Name: d.Name, State: d.State, StartTime: d.StartTime, EndTime: d.EndTime, Duration: d.Duration,
	}}}
}

package monitor

import "time"

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

// CheckpointConfig returns the job's checkpointing settings (GET
// /jobs/<job>/checkpoints/config).
func (m *Monitor) CheckpointConfig() CheckpointConfigInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.info.Checkpointing
	mode := "exactly_once"
	if s.Mode == "AT_LEAST_ONCE" {
		mode = "at_least_once"
	}
	return CheckpointConfigInfo{
		Mode: mode, Interval: s.Interval.Milliseconds(), Timeout: s.Timeout.Milliseconds(),
		MinPause: s.MinPause.Milliseconds(), MaxConcurrent: int64(max(1, s.MaxConcurrent)),
		// Flink's ExternalizedCheckpointInfo: enabled unless NO_EXTERNALIZED_CHECKPOINTS;
		// completed checkpoints are deleted on cancellation unless retained.
		Externalization: ExternalizedCheckpointInfo{
			Enabled:              s.Retention != "" && s.Retention != "NO_EXTERNALIZED_CHECKPOINTS",
			DeleteOnCancellation: s.Retention != "RETAIN_ON_CANCELLATION",
		},
		StateBackend: s.StateBackend, CheckpointStorage: s.CheckpointStorage,
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

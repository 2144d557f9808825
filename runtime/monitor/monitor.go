package monitor

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Options configure a Monitor. The zero value is ready to use.
type Options struct {
	// Clock returns the current time; time.Now when nil. Tests inject their own.
	Clock func() time.Time
	// HistorySize is the number of most recent checkpoints the history keeps (Flink's
	// web.checkpoints.history); 10 when 0. Checkpoints in progress are always kept.
	HistorySize int
}

// DefaultHistorySize is Flink's web.checkpoints.history default.
const DefaultHistorySize = 10

// Monitor is the state of one running job as the runtime reports it: its plugins, its
// checkpoints, its restarts and its record counts. Create it with New when the job's name is
// known, report events to it as they happen, and serve it with Handler.
type Monitor struct {
	job   string
	now   func() time.Time
	reg   *prometheus.Registry
	calls *prometheus.HistogramVec

	mu          sync.Mutex
	info        JobInfo
	state       string
	created     time.Time
	ended       time.Time
	timestamps  map[string]time.Time
	restarts    int64
	plugins     map[string]*pluginState
	pluginOrder []string
	subtasks    map[subtaskKey]*Subtask
	opOrder     []string
	cps         *checkpoints
}

// JobInfo describes a job as it starts: what it is, how it checkpoints, and the plugins
// serving it.
type JobInfo struct {
	// Type is job.type of a built-in job; "" for a custom one.
	Type string
	// ConfigFile is the configuration file the job runs with, if any.
	ConfigFile string
	// MaxParallelism is the number of key groups.
	MaxParallelism int
	// Tasks are the parts of the job that acknowledge checkpoints (Flink's job vertices):
	// the source and each keyed stage, in order.
	Tasks []TaskInfo
	// Checkpointing is how the job takes checkpoints.
	Checkpointing CheckpointSettings
	// Plugins are the plugin processes serving the job.
	Plugins []PluginInfo
}

// TaskInfo is one task of a job: ID is the operator id heading it (the source's, or the
// keyed operator's), Name what to show.
type TaskInfo struct {
	ID          string
	Name        string
	Parallelism int
}

// CheckpointSettings are the checkpointing settings of a job (execution.checkpointing.*).
type CheckpointSettings struct {
	Interval          time.Duration
	Timeout           time.Duration
	TolerableFailed   int
	NumRetained       int
	Incremental       bool
	StateBackend      string
	CheckpointStorage string
	// Mode is "EXACTLY_ONCE" or "AT_LEAST_ONCE" (execution.checkpointing.mode).
	Mode          string
	MinPause      time.Duration
	MaxConcurrent int
	// Retention is execution.checkpointing.externalized-checkpoint-retention:
	// "NO_EXTERNALIZED_CHECKPOINTS", "DELETE_ON_CANCELLATION" or "RETAIN_ON_CANCELLATION".
	Retention string
}

// PluginInfo describes one plugin process.
type PluginInfo struct {
	Name string
	// Roles are "state backend" and/or "checkpoint storage".
	Roles   []string
	Version string
	// Pid is the process id; 0 for a plugin served in the runner's process.
	Pid  int
	Path string
}

type pluginState struct {
	info     PluginInfo
	restarts int64
}

// New returns the Monitor of the job named job. It starts in state INITIALIZING; nothing
// runs in the background until Run.
func New(job string, opts Options) *Monitor {
	now := opts.Clock
	if now == nil {
		now = time.Now
	}
	history := opts.HistorySize
	if history <= 0 {
		history = DefaultHistorySize
	}
	m := &Monitor{
		job: job, now: now, reg: prometheus.NewRegistry(),
		state: JobInitializing, timestamps: map[string]time.Time{},
		plugins: map[string]*pluginState{}, subtasks: map[subtaskKey]*Subtask{},
		cps: newCheckpoints(history),
	}
	m.created = now()
	m.timestamps[JobInitializing] = m.created
	m.register()
	return m
}

// Job returns the name of the job the Monitor watches.
func (m *Monitor) Job() string {
	if m == nil {
		return ""
	}
	return m.job
}

// Registry returns the Prometheus registry /metrics serves; more collectors may be
// registered on it.
func (m *Monitor) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// JobStarted records what the job is and that it is now RUNNING. Call it once the
// plugins are started and configured, before the first attempt runs.
func (m *Monitor) JobStarted(info JobInfo) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info = info
	for _, p := range info.Plugins {
		ps := m.plugins[p.Name]
		if ps == nil {
			ps = &pluginState{}
			m.plugins[p.Name] = ps
			m.pluginOrder = append(m.pluginOrder, p.Name)
		}
		ps.info = p
	}
	for _, t := range info.Tasks {
		m.noteOperator(t.ID)
	}
	m.setState(JobRunning)
}

// SetState records a change of the job's state: one of JobRunning (an attempt started),
// JobRestarting, JobFinished, JobCanceled, JobFailed.
func (m *Monitor) SetState(state string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setState(state)
}

// State returns the job's state (JobInitializing until an attempt starts), without the
// sampling Details does.
func (m *Monitor) State() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

func (m *Monitor) setState(state string) {
	now := m.now()
	m.state = state
	m.timestamps[state] = now
	if terminal(state) {
		m.ended = now
	}
}

func terminal(state string) bool {
	return state == JobFinished || state == JobCanceled || state == JobFailed || state == JobSuspended
}

// Restarted counts a restart of the job (Flink's numRestarts) and puts it in state
// RESTARTING until SetState(JobRunning). Call it when a failed attempt is about to be
// recovered.
func (m *Monitor) Restarted() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.restarts++
	m.setState(JobRestarting)
}

// PluginRestarted counts a restart of plugin name's process and records its new pid.
func (m *Monitor) PluginRestarted(name string, pid int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.plugins[name]
	if ps == nil {
		ps = &pluginState{info: PluginInfo{Name: name}}
		m.plugins[name] = ps
		m.pluginOrder = append(m.pluginOrder, name)
	}
	ps.restarts++
	ps.info.Pid = pid
}

// ObservePluginCall records that a call of method into plugin took d.
func (m *Monitor) ObservePluginCall(plugin, method string, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(plugin, method).Observe(d.Seconds())
}

// Run samples the record counters every 5 seconds, as Flink's meters do, until ctx is
// done. Reading the rates samples too, so Run only makes them exact between reads.
func (m *Monitor) Run(ctx context.Context) {
	if m == nil {
		return
	}
	t := time.NewTicker(meterSampleInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.mu.Lock()
			m.sampleLocked(m.now())
			m.mu.Unlock()
		}
	}
}

// uptime returns Flink's uptime at now in milliseconds: the time since the job last
// entered RUNNING while it runs, 0 while it does not, -1 once it has ended.
func (m *Monitor) uptime(now time.Time) int64 {
	switch {
	case m.state == JobRunning:
		return now.Sub(m.timestamps[JobRunning]).Milliseconds()
	case terminal(m.state):
		return -1
	}
	return 0
}

// sortedPlugins returns the plugins in the order they were first reported.
func (m *Monitor) sortedPlugins() []PluginDetails {
	out := make([]PluginDetails, 0, len(m.pluginOrder))
	for _, name := range m.pluginOrder {
		ps := m.plugins[name]
		roles := append([]string(nil), ps.info.Roles...)
		sort.Strings(roles)
		out = append(out, PluginDetails{
			Name: name, Roles: roles, Version: ps.info.Version, Pid: ps.info.Pid,
			Path: ps.info.Path, Restarts: ps.restarts,
		})
	}
	return out
}

// millis converts a time to milliseconds since the epoch; 0 for the zero time.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

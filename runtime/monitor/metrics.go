package monitor

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric names: Flink's checkpointing, job, operator metric names with a flowstate_
// prefix and the scope (job, operator, plugin) between. docs/operations.md lists them.
const (
	MetricCompletedCheckpoints      = "flowstate_job_numberOfCompletedCheckpoints"
	MetricFailedCheckpoints         = "flowstate_job_numberOfFailedCheckpoints"
	MetricInProgressCheckpoints     = "flowstate_job_numberOfInProgressCheckpoints"
	MetricTotalCheckpoints          = "flowstate_job_totalNumberOfCheckpoints"
	MetricLastCheckpointDuration    = "flowstate_job_lastCheckpointDuration"
	MetricLastCheckpointSize        = "flowstate_job_lastCheckpointSize"
	MetricLastCheckpointFullSize    = "flowstate_job_lastCheckpointFullSize"
	MetricLastCompletedCheckpointID = "flowstate_job_lastCompletedCheckpointId"
	MetricLastCheckpointRestore     = "flowstate_job_lastCheckpointRestoreTimestamp"
	MetricNumRestarts               = "flowstate_job_numRestarts"
	MetricUptime                    = "flowstate_job_uptime"
	MetricRecordsIn                 = "flowstate_operator_numRecordsIn"
	MetricRecordsOut                = "flowstate_operator_numRecordsOut"
	MetricRecordsInPerSecond        = "flowstate_operator_numRecordsInPerSecond"
	MetricRecordsOutPerSecond       = "flowstate_operator_numRecordsOutPerSecond"
	MetricStateSize                 = "flowstate_operator_stateSize"
	MetricPendingRecords            = "flowstate_operator_pendingRecords"
	MetricEmitEventTimeLag          = "flowstate_operator_currentEmitEventTimeLag"
	MetricLastCommitLatency         = "flowstate_operator_lastCommitLatency"
	MetricCommitLatency             = "flowstate_operator_commitLatency_seconds"
	MetricRecordsCommitted          = "flowstate_operator_numRecordsCommitted"
	MetricBatchesCommitted          = "flowstate_operator_numBatchesCommitted"
	MetricPluginCallLatency         = "flowstate_plugin_callLatency_seconds"
	MetricPluginRestarts            = "flowstate_plugin_numRestarts"
)

// Label names.
const (
	LabelJob      = "job"
	LabelOperator = "operator"
	LabelSubtask  = "subtask"
	LabelPlugin   = "plugin"
	LabelMethod   = "method"
	LabelSplit    = "split"
)

// pluginCallBuckets span a call across the plugin boundary: from ~100 µs for a small
// state access to seconds for a snapshot upload.
var pluginCallBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// register fills the registry: the job's own collector, the plugin call histogram, and the
// Go runtime's and the process's standard collectors.
func (m *Monitor) register() {
	job := prometheus.Labels{LabelJob: m.job}
	m.calls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: MetricPluginCallLatency, ConstLabels: job, Buckets: pluginCallBuckets,
		Help: "Time of calls into a plugin across its process boundary, by method, in seconds.",
	}, []string{LabelPlugin, LabelMethod})
	m.reg.MustRegister(
		&jobCollector{m: m, descs: newJobDescs(job)}, m.calls,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
}

// jobDescs describe the metrics jobCollector reports.
type jobDescs struct {
	completed, failed, inProgress, total              *prometheus.Desc
	lastDuration, lastSize, lastFullSize, lastID      *prometheus.Desc
	lastRestore, restarts, uptime                     *prometheus.Desc
	recordsIn, recordsOut, recordsInRate, recordsOutR *prometheus.Desc
	stateSize, pluginRestarts                         *prometheus.Desc
	pending, emitLag, lastCommit, commitLatency       *prometheus.Desc
	recordsCommitted, batchesCommitted                *prometheus.Desc
}

func newJobDescs(job prometheus.Labels) jobDescs {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, job)
	}
	sub := []string{LabelOperator, LabelSubtask}
	return jobDescs{
		completed:        d(MetricCompletedCheckpoints, "Checkpoints and savepoints completed since the job started."),
		failed:           d(MetricFailedCheckpoints, "Checkpoints and savepoints that failed (declined, expired or not published) since the job started."),
		inProgress:       d(MetricInProgressCheckpoints, "Checkpoints in progress."),
		total:            d(MetricTotalCheckpoints, "Checkpoints triggered since the job started (in progress, completed and failed)."),
		lastDuration:     d(MetricLastCheckpointDuration, "Time from trigger to completion of the last completed checkpoint, in milliseconds; -1 before the first."),
		lastSize:         d(MetricLastCheckpointSize, "Bytes the last completed checkpoint uploaded (less than its full size when incremental); -1 before the first."),
		lastFullSize:     d(MetricLastCheckpointFullSize, "Bytes of state the last completed checkpoint references; -1 before the first."),
		lastID:           d(MetricLastCompletedCheckpointID, "Id of the last completed checkpoint; -1 before the first."),
		lastRestore:      d(MetricLastCheckpointRestore, "When the job was last restored from a checkpoint, in milliseconds since the epoch; -1 if never."),
		restarts:         d(MetricNumRestarts, "Restarts of the job after a failure since the runner started it."),
		uptime:           d(MetricUptime, "Milliseconds the job has been running since it last entered RUNNING; 0 while not running, -1 once ended."),
		recordsIn:        d(MetricRecordsIn, "Records the operator subtask took in.", sub...),
		recordsOut:       d(MetricRecordsOut, "Records the operator subtask emitted.", sub...),
		recordsInRate:    d(MetricRecordsInPerSecond, "Records per second the operator subtask took in, over the last 60 s.", sub...),
		recordsOutR:      d(MetricRecordsOutPerSecond, "Records per second the operator subtask emitted, over the last 60 s.", sub...),
		stateSize:        d(MetricStateSize, "Bytes of the operator subtask's keyed state backend, where the backend can tell.", sub...),
		pluginRestarts:   d(MetricPluginRestarts, "Restarts of the plugin's process since the job started.", LabelPlugin),
		pending:          d(MetricPendingRecords, "Records a split of the source subtask still has to read past the last it emitted (for JetStream: the split subject's last stream sequence minus the last emitted).", LabelOperator, LabelSubtask, LabelSplit),
		emitLag:          d(MetricEmitEventTimeLag, "Milliseconds between the storing of the last record the source subtask emitted in its input (a JetStream message's stream timestamp) and its emission.", sub...),
		lastCommit:       d(MetricLastCommitLatency, "Milliseconds the sink subtask's last commit took.", sub...),
		commitLatency:    d(MetricCommitLatency, "Time of the sink subtask's commits, in seconds.", sub...),
		recordsCommitted: d(MetricRecordsCommitted, "Records the sink subtask's commits made visible.", sub...),
		batchesCommitted: d(MetricBatchesCommitted, "Batches (atomic publishes, parts of a commit) the sink subtask's commits made visible.", sub...),
	}
}

// jobCollector reads the Monitor's state at each scrape, so every metric agrees with the
// REST answers at the same moment.
type jobCollector struct {
	m     *Monitor
	descs jobDescs
}

// Describe sends every metric's description.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	for _, x := range []*prometheus.Desc{
		d.completed, d.failed, d.inProgress, d.total, d.lastDuration, d.lastSize, d.lastFullSize,
		d.lastID, d.lastRestore, d.restarts, d.uptime, d.recordsIn, d.recordsOut, d.recordsInRate,
		d.recordsOutR, d.stateSize, d.pluginRestarts, d.pending, d.emitLag, d.lastCommit, d.commitLatency,
		d.recordsCommitted, d.batchesCommitted,
	} {
		ch <- x
	}
}

// Collect sends the current values.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	m, d := c.m, c.descs
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	cs := m.cps
	val := func(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, t, v, labels...)
	}
	val(d.completed, prometheus.CounterValue, float64(cs.counts.Completed))
	val(d.failed, prometheus.CounterValue, float64(cs.counts.Failed))
	val(d.inProgress, prometheus.GaugeValue, float64(cs.counts.InProgress))
	val(d.total, prometheus.CounterValue, float64(cs.counts.Total))
	duration, size, fullSize, id := -1.0, -1.0, -1.0, -1.0
	if l := cs.latestCompleted; l != nil {
		duration, size, fullSize, id = float64(l.duration()), float64(l.checkpointedSize), float64(l.stateSize), float64(l.id)
	}
	val(d.lastDuration, prometheus.GaugeValue, duration)
	val(d.lastSize, prometheus.GaugeValue, size)
	val(d.lastFullSize, prometheus.GaugeValue, fullSize)
	val(d.lastID, prometheus.GaugeValue, id)
	restore := -1.0
	if cs.restored != nil {
		restore = float64(cs.restored.RestoreTimestamp)
	}
	val(d.lastRestore, prometheus.GaugeValue, restore)
	val(d.restarts, prometheus.CounterValue, float64(m.restarts))
	val(d.uptime, prometheus.GaugeValue, float64(m.uptime(now)))
	for k, s := range m.subtasks {
		idx := strconv.Itoa(k.idx)
		in, out := s.in.Load(), s.out.Load()
		val(d.recordsIn, prometheus.CounterValue, float64(in), k.op, idx)
		val(d.recordsOut, prometheus.CounterValue, float64(out), k.op, idx)
		val(d.recordsInRate, prometheus.GaugeValue, s.inMeter.rate(now, in), k.op, idx)
		val(d.recordsOutR, prometheus.GaugeValue, s.outMeter.rate(now, out), k.op, idx)
		if size := s.stateSize.Load(); size >= 0 {
			val(d.stateSize, prometheus.GaugeValue, float64(size), k.op, idx)
		}
		c.collectConnector(ch, s, k.op, idx)
	}
	for _, name := range m.pluginOrder {
		val(d.pluginRestarts, prometheus.CounterValue, float64(m.plugins[name].restarts), name)
	}
}

// collectConnector sends what subtask s's connector measured.
func (c *jobCollector) collectConnector(ch chan<- prometheus.Metric, s *Subtask, op, idx string) {
	d, cs := c.descs, &s.conn
	val := func(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, t, v, labels...)
	}
	if lag := cs.emitLag.Load(); lag >= 0 {
		val(d.emitLag, prometheus.GaugeValue, float64(time.Duration(lag).Milliseconds()), op, idx)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for split, n := range cs.splits {
		val(d.pending, prometheus.GaugeValue, float64(n), op, idx, split)
	}
	if cm := &cs.commits; cm.n > 0 {
		val(d.lastCommit, prometheus.GaugeValue, float64(cm.last.Milliseconds()), op, idx)
		val(d.recordsCommitted, prometheus.CounterValue, float64(cm.records), op, idx)
		val(d.batchesCommitted, prometheus.CounterValue, float64(cm.batches), op, idx)
		ch <- prometheus.MustNewConstHistogram(d.commitLatency, uint64(cm.n), cm.sum, cm.cumulativeBuckets(), op, idx)
	}
}

package monitor

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// TestMetricsFollowCheckpoints scrapes /metrics after each checkpoint event and checks the
// checkpoint metrics against what the events say: completed rises, a failure is counted,
// and the last-checkpoint gauges follow the last completed checkpoint (not savepoint).
func TestMetricsFollowCheckpoints(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	m := startJob(clock)
	srv := serve(t, m)
	job := "job=orders"

	fams := scrape(t, srv.URL)
	for _, name := range []string{MetricLastCheckpointDuration, MetricLastCheckpointSize, MetricLastCheckpointFullSize, MetricLastCompletedCheckpointID, MetricLastCheckpointRestore} {
		if got := sampleValue(t, fams, name, job); got != -1 {
			t.Errorf("%s before any checkpoint = %v, want -1", name, got)
		}
	}
	if got := sampleValue(t, fams, MetricCompletedCheckpoints, job); got != 0 {
		t.Errorf("%s before any checkpoint = %v, want 0", MetricCompletedCheckpoints, got)
	}

	var completed, failed, inProgress int
	var last *cpEvent
	prevCompleted := 0.0
	for i, e := range testCheckpoints {
		feed(m, start, e)
		switch {
		case e.took == 0:
			inProgress++
		case e.fail != "":
			failed++
		default:
			completed++
			if e.kind == dataflow.KindCheckpoint {
				last = &testCheckpoints[i]
			}
		}
		fams := scrape(t, srv.URL)
		got := sampleValue(t, fams, MetricCompletedCheckpoints, job)
		if got != float64(completed) {
			t.Errorf("after checkpoint %d: %s = %v, want %d", e.id, MetricCompletedCheckpoints, got, completed)
		}
		if got < prevCompleted {
			t.Errorf("after checkpoint %d: %s fell from %v to %v", e.id, MetricCompletedCheckpoints, prevCompleted, got)
		}
		prevCompleted = got
		if got := sampleValue(t, fams, MetricFailedCheckpoints, job); got != float64(failed) {
			t.Errorf("after checkpoint %d: %s = %v, want %d", e.id, MetricFailedCheckpoints, got, failed)
		}
		if got := sampleValue(t, fams, MetricInProgressCheckpoints, job); got != float64(inProgress) {
			t.Errorf("after checkpoint %d: %s = %v, want %d", e.id, MetricInProgressCheckpoints, got, inProgress)
		}
		if got := sampleValue(t, fams, MetricTotalCheckpoints, job); got != float64(i+1) {
			t.Errorf("after checkpoint %d: %s = %v, want %d", e.id, MetricTotalCheckpoints, got, i+1)
		}
		if last == nil {
			continue
		}
		for _, c := range []struct {
			name string
			want float64
		}{
			{MetricLastCheckpointDuration, float64(last.took.Milliseconds())},
			{MetricLastCheckpointSize, float64(last.added)},
			{MetricLastCheckpointFullSize, float64(last.full)},
			{MetricLastCompletedCheckpointID, float64(last.id)},
		} {
			if got := sampleValue(t, fams, c.name, job); got != c.want {
				t.Errorf("after checkpoint %d: %s = %v, want %v (checkpoint %d)", e.id, c.name, got, c.want, last.id)
			}
		}
	}
	if failed == 0 || completed < 2 {
		t.Fatalf("the scenario must complete several checkpoints and fail one (completed %d, failed %d)", completed, failed)
	}
}

// TestMetricsJobAndPlugins checks restarts, the restore time, uptime, plugin restarts and
// the plugin call histogram.
func TestMetricsJobAndPlugins(t *testing.T) {
	clock := newFakeClock()
	m := startJob(clock)
	srv := serve(t, m)
	job := "job=orders"

	clock.Advance(5 * time.Minute)
	m.Restarted()
	m.PluginRestarted("hashmap", 5151)
	restoreAt := clock.Advance(2 * time.Second)
	m.RestoredFrom(5, restoreAt, "file:///ckpt/orders/chk-5", false)
	m.Restarted()
	m.PluginRestarted("hashmap", 5252)
	m.PluginRestarted("fsstorage", 5253)
	fams := scrape(t, srv.URL)
	if got := sampleValue(t, fams, MetricUptime, job); got != 0 {
		t.Errorf("%s while restarting = %v, want 0", MetricUptime, got)
	}
	runningAt := clock.Advance(time.Second)
	m.SetState(JobRunning)
	clock.Advance(90 * time.Second)

	calls := []struct {
		plugin, method string
		d              time.Duration
	}{
		{"hashmap", "Get", 120 * time.Microsecond}, {"hashmap", "Get", 3 * time.Millisecond},
		{"hashmap", "Write", 800 * time.Microsecond}, {"fsstorage", "Write", 40 * time.Millisecond},
		{"hashmap", "Get", 2 * time.Second},
	}
	type key struct{ plugin, method string }
	wantCount, wantSum := map[key]uint64{}, map[key]float64{}
	for _, c := range calls {
		m.ObservePluginCall(c.plugin, c.method, c.d)
		k := key{c.plugin, c.method}
		wantCount[k]++
		wantSum[k] += c.d.Seconds()
	}

	fams = scrape(t, srv.URL)
	if got := sampleValue(t, fams, MetricNumRestarts, job); got != 2 {
		t.Errorf("%s = %v, want 2", MetricNumRestarts, got)
	}
	if got, want := sampleValue(t, fams, MetricLastCheckpointRestore, job), float64(restoreAt.UnixMilli()); got != want {
		t.Errorf("%s = %v, want %v", MetricLastCheckpointRestore, got, want)
	}
	if got, want := sampleValue(t, fams, MetricUptime, job), float64(clock.Now().Sub(runningAt).Milliseconds()); got != want {
		t.Errorf("%s = %v, want %v (since the job last entered RUNNING)", MetricUptime, got, want)
	}
	if got := sampleValue(t, fams, MetricPluginRestarts, job, "plugin=hashmap"); got != 2 {
		t.Errorf("%s{plugin=hashmap} = %v, want 2", MetricPluginRestarts, got)
	}
	if got := sampleValue(t, fams, MetricPluginRestarts, job, "plugin=fsstorage"); got != 1 {
		t.Errorf("%s{plugin=fsstorage} = %v, want 1", MetricPluginRestarts, got)
	}
	if f := fams[MetricPluginCallLatency]; f == nil || f.GetType().String() != "HISTOGRAM" {
		t.Fatalf("%s: want a histogram, got %v", MetricPluginCallLatency, f)
	}
	for k, n := range wantCount {
		h := findSeries(t, fams, MetricPluginCallLatency, job, "plugin="+k.plugin, "method="+k.method).Histogram
		if h.GetSampleCount() != n {
			t.Errorf("%s{%s,%s} count = %d, want %d", MetricPluginCallLatency, k.plugin, k.method, h.GetSampleCount(), n)
		}
		if math.Abs(h.GetSampleSum()-wantSum[k]) > 1e-9 {
			t.Errorf("%s{%s,%s} sum = %v, want %v", MetricPluginCallLatency, k.plugin, k.method, h.GetSampleSum(), wantSum[k])
		}
		// The bucket at 5 ms holds the calls of at most 5 ms.
		var le5ms uint64
		for _, c := range calls {
			if c.plugin == k.plugin && c.method == k.method && c.d <= 5*time.Millisecond {
				le5ms++
			}
		}
		for _, b := range h.Bucket {
			if b.GetUpperBound() == 0.005 && b.GetCumulativeCount() != le5ms {
				t.Errorf("%s{%s,%s} bucket le=0.005 = %d, want %d", MetricPluginCallLatency, k.plugin, k.method, b.GetCumulativeCount(), le5ms)
			}
		}
	}
	m.SetState(JobFinished)
	if got := sampleValue(t, scrape(t, srv.URL), MetricUptime, job); got != -1 {
		t.Errorf("%s after the job finished = %v, want -1", MetricUptime, got)
	}
}

// TestMetricsRecords checks the per-subtask record counters, their rates over the last
// 60 s (Flink's MeterView: sampled every 5 s, counts before the counter started are 0) and
// the keyed state size.
func TestMetricsRecords(t *testing.T) {
	clock := newFakeClock()
	m := startJob(clock)
	srv := serve(t, m)

	type counts struct{ in, out int64 }
	subs := map[string]*Subtask{}
	total := map[string]*counts{}
	// history[k][i] is the count of subtask k after i 5-second steps.
	history := map[string][]counts{}
	for _, k := range []struct {
		op  string
		idx int
	}{{"source", 0}, {"source", 1}, {"count", 0}, {"count", 1}} {
		name := k.op + "/" + strconv.Itoa(k.idx)
		subs[name] = m.Subtask(k.op, k.idx)
		total[name] = &counts{}
		history[name] = []counts{{}}
	}
	// Each subtask gets a steady rate per step, different for each, for 20 steps of 5 s.
	perStep := map[string]counts{"source/0": {0, 500}, "source/1": {0, 700}, "count/0": {480, 96}, "count/1": {720, 144}}
	const steps = 20
	for step := 1; step <= steps; step++ {
		for name, s := range subs {
			// Twice half a step's worth, to count in several calls.
			for range 2 {
				s.RecordsIn(int(perStep[name].in / 2))
				s.RecordsOut(int(perStep[name].out / 2))
			}
			total[name].in += perStep[name].in / 2 * 2
			total[name].out += perStep[name].out / 2 * 2
			history[name] = append(history[name], *total[name])
		}
		clock.Advance(meterSampleInterval)
		if step == 6 {
			// Reading at 30 s: the window reaches before the start; Flink divides the
			// count by the window.
			fams := scrape(t, srv.URL)
			for name, c := range total {
				op, idx := splitName(name)
				if got, want := sampleValue(t, fams, MetricRecordsInPerSecond, "job=orders", "operator="+op, "subtask="+idx), float64(c.in)/60; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s{%s} at 30 s = %v, want %v", MetricRecordsInPerSecond, name, got, want)
				}
			}
		}
		m.mu.Lock()
		m.sampleLocked(clock.Now())
		m.mu.Unlock()
	}
	subs["count/0"].SetStateSize(12_345)

	fams := scrape(t, srv.URL)
	for name, c := range total {
		op, idx := splitName(name)
		labels := []string{"job=orders", "operator=" + op, "subtask=" + idx}
		if got := sampleValue(t, fams, MetricRecordsIn, labels...); got != float64(c.in) {
			t.Errorf("%s{%s} = %v, want %d", MetricRecordsIn, name, got, c.in)
		}
		if got := sampleValue(t, fams, MetricRecordsOut, labels...); got != float64(c.out) {
			t.Errorf("%s{%s} = %v, want %d", MetricRecordsOut, name, got, c.out)
		}
		// 100 s in, the window is the last 60 s: 12 steps.
		h := history[name]
		wantIn := float64(h[steps].in-h[steps-12].in) / 60
		wantOut := float64(h[steps].out-h[steps-12].out) / 60
		if got := sampleValue(t, fams, MetricRecordsInPerSecond, labels...); math.Abs(got-wantIn) > 1e-9 {
			t.Errorf("%s{%s} = %v, want %v", MetricRecordsInPerSecond, name, got, wantIn)
		}
		if got := sampleValue(t, fams, MetricRecordsOutPerSecond, labels...); math.Abs(got-wantOut) > 1e-9 {
			t.Errorf("%s{%s} = %v, want %v", MetricRecordsOutPerSecond, name, got, wantOut)
		}
	}
	if got := sampleValue(t, fams, MetricStateSize, "job=orders", "operator=count", "subtask=0"); got != 12_345 {
		t.Errorf("%s{count/0} = %v, want 12345", MetricStateSize, got)
	}
	for _, s := range fams[MetricStateSize].Metric {
		for _, l := range s.Label {
			if l.GetName() == "subtask" && l.GetValue() != "0" {
				t.Errorf("%s has a series for a subtask whose backend told no size: %v", MetricStateSize, s)
			}
		}
	}
}

func splitName(name string) (op, idx string) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// TestNilMonitor: the runtime may run without monitoring; every event is then a no-op.
func TestNilMonitor(t *testing.T) {
	var m *Monitor
	m.JobStarted(JobInfo{})
	m.SetState(JobRunning)
	m.Restarted()
	m.PluginRestarted("x", 1)
	m.ObservePluginCall("x", "Get", time.Millisecond)
	m.CheckpointTriggered(1, dataflow.KindCheckpoint, time.Time{})
	m.SubtaskAcknowledged(1, "a", 0, dataflow.AckStats{})
	m.CheckpointCompleted(1, time.Time{}, dataflow.CompletedStats{})
	m.CheckpointFailed(1, time.Time{}, "x")
	m.CheckpointDiscarded(1)
	m.RestoredFrom(1, time.Time{}, "", false)
	s := m.Subtask("a", 0)
	s.RecordsIn(1)
	s.RecordsOut(1)
	s.SetStateSize(1)
	if m.Job() != "" || m.Registry() != nil {
		t.Fatal("a nil Monitor has no job and no registry")
	}
}

// TestConnectorMetrics: what a source's and a sink's subtasks report through
// dataflow.ConnectorEvents is exposed under Flink's connector metric names, with the
// operator, subtask and (for pending records) split labels, and in the job's details.
func TestConnectorMetrics(t *testing.T) {
	clock := newFakeClock()
	m := startJob(clock)
	srv := serve(t, m)
	var src, sink dataflow.ConnectorEvents = m.Events().Subtask("source", 1), m.Events().Subtask(dataflow.SinkID, 0)
	src.SplitPending("in.a", 7)
	src.SplitPending("in.b", 0)
	src.SplitPending("in.a", 5) // the latest counts
	src.EmitEventTimeLag(1500 * time.Millisecond)
	sink.Committed(1000, 2, 30*time.Millisecond)
	sink.Committed(10, 1, 4*time.Second)

	fams := scrape(t, srv.URL)
	job, op := "job=orders", "operator=source"
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{MetricPendingRecords, []string{job, op, "subtask=1", "split=in.a"}, 5},
		{MetricPendingRecords, []string{job, op, "subtask=1", "split=in.b"}, 0},
		{MetricEmitEventTimeLag, []string{job, op, "subtask=1"}, 1500},
		{MetricLastCommitLatency, []string{job, "operator=" + dataflow.SinkID, "subtask=0"}, 4000},
		{MetricRecordsCommitted, []string{job, "operator=" + dataflow.SinkID, "subtask=0"}, 1010},
		{MetricBatchesCommitted, []string{job, "operator=" + dataflow.SinkID, "subtask=0"}, 3},
	} {
		if got := sampleValue(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := findSeries(t, fams, MetricCommitLatency, job, "operator="+dataflow.SinkID, "subtask=0").GetHistogram()
	if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-4.03) > 1e-9 {
		t.Errorf("%s: count %d sum %v, want 2 and 4.03", MetricCommitLatency, h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.03 {
			want++
		}
		if b.GetUpperBound() >= 4 {
			want++
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("%s bucket le=%v: %d, want %d", MetricCommitLatency, b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	// A subtask whose connector measures nothing has none of these series.
	m.Subtask("count", 0).RecordsIn(1)
	if f := scrape(t, srv.URL)[MetricEmitEventTimeLag]; len(f.GetMetric()) != 1 {
		t.Errorf("%s has %d series, want the source subtask's only", MetricEmitEventTimeLag, len(f.GetMetric()))
	}

	v := getJSONT(t, srv.URL+"/jobs/orders", 200)
	var conns []map[string]any
	for _, vx := range v["vertices"].([]any) {
		for _, s := range vx.(map[string]any)["subtasks"].([]any) {
			if c, ok := s.(map[string]any)["connector"]; ok {
				conns = append(conns, c.(map[string]any))
			}
		}
	}
	if len(conns) != 2 {
		t.Fatalf("job details carry %d subtasks with connector metrics, want 2: %v", len(conns), v["vertices"])
	}
	if num(t, conns[0], "pendingRecords") != 5 || num(t, conns[0], "currentEmitEventTimeLag") != 1500 ||
		num(t, conns[1], "commits", "records") != 1010 || num(t, conns[1], "commits", "last-latency") != 4000 {
		t.Errorf("connector metrics in the job's details: %v", conns)
	}
}

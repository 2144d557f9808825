package monitor

import (
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// The scenario the tests feed: a job "orders" with a source and a keyed stage of two
// subtasks each, and checkpoints as the coordinator would report them. Expected values
// are computed from these tables by the tests, never read back through the Monitor.

var testTasks = []TaskInfo{
	{ID: "source", Name: "Source: orders", Parallelism: 2},
	{ID: "count", Name: "KeyBy count", Parallelism: 2},
}

var testPlugins = []PluginInfo{
	{Name: "hashmap", Roles: []string{"state backend"}, Version: "1.2.0", Pid: 4242, Path: "/opt/plugins/flowstate-plugin-hashmap"},
	{Name: "fsstorage", Roles: []string{"checkpoint storage"}, Version: "1.2.1", Pid: 4243},
}

var testSettings = CheckpointSettings{
	Interval: 10 * time.Second, Timeout: 2 * time.Minute, TolerableFailed: 3, NumRetained: 2,
	Incremental: true, StateBackend: "hashmap", CheckpointStorage: "fsstorage",
}

// ackEvent is one subtask's acknowledgement, at offset from the checkpoint's trigger.
type ackEvent struct {
	task                     string
	subtask                  int
	after                    time.Duration
	sync, async, align, wait time.Duration
	size, added              int64
}

// cpEvent is one checkpoint: triggered at start+at, ended after took (completed when fail
// is "", failed with fail otherwise; still in progress when took is 0).
type cpEvent struct {
	id          int64
	kind        dataflow.CheckpointKind
	at, took    time.Duration
	acks        []ackEvent
	fail        string
	full, added int64
}

func (e cpEvent) path() string { return fmt.Sprintf("file:///ckpt/orders/chk-%d", e.id) }

// fullAcks returns an acknowledgement from every subtask of testTasks, sized so the whole
// checkpoint references full bytes and uploads added.
func fullAcks(full, added int64, took time.Duration) []ackEvent {
	var acks []ackEvent
	n := int64(0)
	for _, t := range testTasks {
		n += int64(t.Parallelism)
	}
	i := int64(0)
	for _, t := range testTasks {
		for s := 0; s < t.Parallelism; s++ {
			i++
			acks = append(acks, ackEvent{
				task: t.ID, subtask: s, after: took * time.Duration(i) / time.Duration(n+1),
				sync: time.Duration(i) * time.Millisecond, async: time.Duration(10*i) * time.Millisecond,
				align: time.Duration(s) * 3 * time.Millisecond, wait: time.Duration(i) * 2 * time.Millisecond,
				size: full / n, added: added / n,
			})
		}
	}
	// The last subtask carries the remainders, so the sums are exact.
	acks[len(acks)-1].size += full % n
	acks[len(acks)-1].added += added % n
	return acks
}

var testCheckpoints = []cpEvent{
	{id: 1, at: 10 * time.Second, took: 1234 * time.Millisecond, full: 40_000, added: 40_000, acks: fullAcks(40_000, 40_000, 1234*time.Millisecond)},
	{id: 2, at: 20 * time.Second, took: 850 * time.Millisecond, full: 52_000, added: 12_000, acks: fullAcks(52_000, 12_000, 850*time.Millisecond)},
	{id: 3, at: 30 * time.Second, took: 2 * time.Minute, fail: "checkpoint 3 expired after 2m0s (execution.checkpointing.timeout) with 3 of 4 subtasks acknowledged",
		acks: fullAcks(60_000, 9_000, 2*time.Minute)[:3]},
	{id: 4, kind: dataflow.KindSavepoint, at: 2*time.Minute + 40*time.Second, took: 3 * time.Second, full: 61_000, added: 61_000, acks: fullAcks(61_000, 61_000, 3*time.Second)},
	{id: 5, at: 2*time.Minute + 50*time.Second, took: 990 * time.Millisecond, full: 63_500, added: 7_700, acks: fullAcks(63_500, 7_700, 990*time.Millisecond)},
	{id: 6, at: 3 * time.Minute, took: 400 * time.Millisecond, fail: "checkpoint 6 declined: operator count subtask 1: upload snapshot: fsstorage: write chk-6/shared/x: no space left on device",
		acks: fullAcks(64_000, 7_000, 400*time.Millisecond)[:2]},
	{id: 7, at: 3*time.Minute + 10*time.Second, acks: fullAcks(65_000, 7_100, time.Second)[:1]},
}

// feed reports e to m as the coordinator would, times relative to start.
func feed(m *Monitor, start time.Time, e cpEvent) {
	trigger := start.Add(e.at)
	m.CheckpointTriggered(e.id, e.kind, trigger)
	for _, a := range e.acks {
		m.SubtaskAcknowledged(e.id, a.task, a.subtask, dataflow.AckStats{
			At: trigger.Add(a.after), Sync: a.sync, Async: a.async, Alignment: a.align, StartDelay: a.wait,
			StateSize: a.size, CheckpointedSize: a.added,
		})
	}
	switch {
	case e.took == 0:
	case e.fail != "":
		m.CheckpointFailed(e.id, trigger.Add(e.took), e.fail)
	default:
		m.CheckpointCompleted(e.id, trigger.Add(e.took), dataflow.CompletedStats{StateSize: e.full, CheckpointedSize: e.added, ExternalPath: e.path()})
	}
}

// startJob creates the Monitor of job "orders" at clock's time and starts it.
func startJob(clock *fakeClock) *Monitor {
	m := New("orders", Options{Clock: clock.Now})
	m.JobStarted(JobInfo{
		Type: "aggregate", ConfigFile: "/etc/flowstate/orders.yaml", MaxParallelism: 128,
		Tasks: testTasks, Checkpointing: testSettings, Plugins: testPlugins,
	})
	return m
}

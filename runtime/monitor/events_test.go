package monitor

import (
	"testing"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// TestEvents: what a run reports through Monitor.Events reaches the Monitor: a checkpoint
// triggered and completed is counted, and a subtask's records go to the counters Subtask
// hands out; a nil Monitor gives no Events at all.
func TestEvents(t *testing.T) {
	if (*Monitor)(nil).Events() != nil {
		t.Fatal("a nil Monitor's Events is not nil")
	}
	clock := newFakeClock()
	m := startJob(clock)
	ev := m.Events()
	ev.CheckpointTriggered(1, dataflow.KindCheckpoint, clock.Now())
	ev.SubtaskAcknowledged(1, "count", 0, dataflow.AckStats{StateSize: 10, CheckpointedSize: 10})
	ev.CheckpointCompleted(1, clock.Now(), dataflow.CompletedStats{StateSize: 10, CheckpointedSize: 10, ExternalPath: "file:///ckpt/orders/chk-1"})
	ev.CheckpointTriggered(2, dataflow.KindSavepoint, clock.Now())
	ev.CheckpointFailed(2, clock.Now(), "declined")
	if got := m.Checkpoints().Counts; got.Total != 2 || got.Completed != 1 || got.Failed != 1 || got.InProgress != 0 {
		t.Fatalf("counts %+v, want 2 checkpoints: 1 completed, 1 failed", got)
	}
	ev.Subtask("count", 0).RecordsIn(7)
	ev.Subtask("count", 0).RecordsOut(3)
	s := m.Subtask("count", 0)
	if in, out := s.in.Load(), s.out.Load(); in != 7 || out != 3 {
		t.Fatalf("subtask counts in %d, out %d; want 7 and 3", in, out)
	}
}

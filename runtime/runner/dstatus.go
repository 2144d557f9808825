package runner

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/flowstate/flowstate/runtime/cluster"
)

// statusEvery is how often a member publishes its status to the group (runner status and
// the web page of any member read them).
const statusEvery = 2 * time.Second

// publish records the member's status and its tasks' in the group's bucket, at most every
// statusEvery unless now is set.
func (m *member) publish(ctx context.Context, now bool) {
	if !now && time.Since(m.published) < statusEvery {
		return
	}
	m.published = time.Now()
	s := cluster.MemberStatus{Started: m.started, Updated: time.Now().UTC()}
	for _, t := range slices.Sorted(maps.Keys(m.running)) {
		s.Tasks = append(s.Tasks, m.running[t].status())
	}
	if err := m.g.Publish(ctx, s); err != nil {
		m.log.Warn("publishing the member's status", "error", err)
	}
}

// status is what the member reports of the task: its state, its fencing token, the
// records its source read and has yet to read, and its checkpoints.
func (r *taskRun) status() cluster.TaskStatus {
	st := cluster.TaskStatus{Task: r.id, State: cluster.TaskRunning, Epoch: r.lease.Record().Epoch, Lag: -1}
	switch {
	case r.stopped:
		st.State = cluster.TaskStopped
	case r.finished:
		st.State = cluster.TaskFinished
	case r.handingOver:
		st.State = cluster.TaskHandingOff
	}
	d := r.mon.Details()
	if len(d.Vertices) > 0 {
		for _, s := range d.Vertices[0].Subtasks {
			st.RecordsIn += s.WriteRecords
			if c := s.Connector; c != nil && c.PendingRecords != nil {
				st.Lag = *c.PendingRecords
			}
		}
	}
	cps := r.mon.Checkpoints()
	if c := cps.Latest.Completed; c != nil {
		st.LastCheckpoint = &cluster.CheckpointStatus{ID: c.ID, Time: time.UnixMilli(c.LatestAckTimestamp).UTC(), Pointer: c.ExternalPath,
			Duration: c.EndToEndDuration, Bytes: c.StateSize}
	}
	if rs := cps.Latest.Restored; rs != nil {
		st.Restored = rs.ExternalPath
	}
	return st
}

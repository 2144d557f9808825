package monitor

import (
	"slices"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// checkpoints is the checkpoint statistics tracker: counts, the summary of completed
// checkpoints, the latest of each kind and a bounded history.
type checkpoints struct {
	historySize int
	byID        map[int64]*cpStats
	order       []int64 // ids in the history, oldest first
	counts      Counts
	durations   series
	stateSizes  series
	// checkpointedSizes are the completed checkpoints' uploaded bytes.
	checkpointedSizes series
	latestCompleted   *cpStats
	latestSavepoint   *cpStats
	latestFailed      *cpStats
	restored          *RestoredCheckpoint
}

func newCheckpoints(historySize int) *checkpoints {
	return &checkpoints{historySize: historySize, byID: map[int64]*cpStats{}}
}

// cpStats is one checkpoint as the tracker knows it.
type cpStats struct {
	id                      int64
	kind                    dataflow.CheckpointKind
	status                  string
	trigger, latestAck, end time.Time
	stateSize               int64
	checkpointedSize        int64
	path                    string
	discarded               bool
	failure                 string
	uploaded                int64 // bytes written to the storage so far
	tasks                   []TaskInfo
	acks                    map[string]map[int]dataflow.AckStats
}

// get returns checkpoint id, adding it in progress (triggered at at) when it is new.
func (cs *checkpoints) get(id int64, at time.Time) *cpStats {
	if c := cs.byID[id]; c != nil {
		return c
	}
	c := &cpStats{id: id, status: StatusInProgress, trigger: at, acks: map[string]map[int]dataflow.AckStats{}}
	cs.byID[id] = c
	cs.order = append(cs.order, id)
	cs.counts.Total++
	cs.counts.InProgress++
	cs.trim()
	return c
}

// trim drops the oldest checkpoints no longer in progress beyond the history size.
func (cs *checkpoints) trim() {
	for i := 0; len(cs.order) > cs.historySize && i < len(cs.order); {
		id := cs.order[i]
		if cs.byID[id].status == StatusInProgress {
			i++
			continue
		}
		delete(cs.byID, id)
		cs.order = append(cs.order[:i], cs.order[i+1:]...)
	}
}

// ackedSizes sums the sizes the acknowledged subtasks reported.
func (c *cpStats) ackedSizes() (state, checkpointed int64) {
	for _, subs := range c.acks {
		for _, a := range subs {
			state += a.StateSize
			checkpointed += a.CheckpointedSize
		}
	}
	return state, checkpointed
}

// numSubtasks returns the subtasks expected to acknowledge and those that did.
func (c *cpStats) numSubtasks() (expected, acked int) {
	for _, t := range c.tasks {
		expected += t.Parallelism
	}
	for _, subs := range c.acks {
		acked += len(subs)
	}
	return max(expected, acked), acked
}

// sizes returns the checkpoint's sizes: as completed, or summed over the acknowledgements.
func (c *cpStats) sizes() (state, checkpointed int64) {
	if c.status == StatusCompleted || c.status == StatusFailed {
		return c.stateSize, c.checkpointedSize
	}
	return c.ackedSizes()
}

// duration returns Flink's end_to_end_duration in ms: to completion or failure, or to the
// latest acknowledgement while in progress (-1 before the first).
func (c *cpStats) duration() int64 {
	switch {
	case !c.end.IsZero():
		return c.end.Sub(c.trigger).Milliseconds()
	case !c.latestAck.IsZero():
		return c.latestAck.Sub(c.trigger).Milliseconds()
	}
	return -1
}

// view returns the checkpoint in Flink's shape.
func (c *cpStats) view() CheckpointStatistics {
	state, checkpointed := c.sizes()
	expected, acked := c.numSubtasks()
	v := CheckpointStatistics{
		TaskCheckpointStatistics: TaskCheckpointStatistics{
			ID: c.id, Status: c.status, LatestAckTimestamp: -1,
			CheckpointedSize: checkpointed, StateSize: state, EndToEndDuration: c.duration(),
			NumSubtasks: expected, NumAcknowledgedSubtasks: acked,
		},
		IsSavepoint: c.kind != dataflow.KindCheckpoint, TriggerTimestamp: millis(c.trigger),
		CheckpointType: checkpointType(c.kind), Tasks: map[string]TaskCheckpointStatistics{},
		UploadedSize: c.uploaded,
	}
	if !c.latestAck.IsZero() {
		v.LatestAckTimestamp = millis(c.latestAck)
	}
	if v.IsSavepoint {
		v.SavepointFormat = "CANONICAL"
	}
	switch c.status {
	case StatusCompleted:
		v.ClassName, v.ExternalPath = ClassCompleted, c.path
		discarded := c.discarded
		v.Discarded = &discarded
	case StatusFailed:
		v.ClassName, v.FailureTimestamp, v.FailureMessage = ClassFailed, millis(c.end), c.failure
	default:
		v.ClassName = ClassInProgress
	}
	for _, id := range c.taskIDs() {
		v.Tasks[id] = c.task(id).TaskCheckpointStatistics
	}
	return v
}

// taskIDs returns the ids of the job's tasks, then of any other task that acknowledged.
func (c *cpStats) taskIDs() []string {
	var ids []string
	known := map[string]bool{}
	for _, t := range c.tasks {
		ids = append(ids, t.ID)
		known[t.ID] = true
	}
	var extra []string
	for id := range c.acks {
		if !known[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	return append(ids, extra...)
}

// task returns task id's part of the checkpoint, with each subtask's.
func (c *cpStats) task(id string) TaskCheckpointDetails {
	parallelism := 0
	for _, t := range c.tasks {
		if t.ID == id {
			parallelism = t.Parallelism
		}
	}
	subs := c.acks[id]
	for idx := range subs {
		parallelism = max(parallelism, idx+1)
	}
	d := TaskCheckpointDetails{TaskCheckpointStatistics: TaskCheckpointStatistics{
		ID: c.id, Status: c.status, LatestAckTimestamp: -1, EndToEndDuration: -1,
		NumSubtasks: parallelism, NumAcknowledgedSubtasks: len(subs),
	}}
	var state, checkpointed, e2e, syncs, asyncs, aligns, delays series
	var latest time.Time
	for idx := 0; idx < parallelism; idx++ {
		a, ok := subs[idx]
		if !ok {
			d.Subtasks = append(d.Subtasks, SubtaskCheckpointStatistics{Index: idx, Status: SubtaskPendingOrFailed})
			continue
		}
		if a.At.After(latest) {
			latest = a.At
		}
		sub := SubtaskCheckpointStatistics{
			Index: idx, Status: SubtaskCompleted, AckTimestamp: millis(a.At),
			EndToEndDuration: a.At.Sub(c.trigger).Milliseconds(),
			CheckpointedSize: a.CheckpointedSize, StateSize: a.StateSize,
			Checkpoint: &SubtaskDuration{Sync: a.Sync.Milliseconds(), Async: a.Async.Milliseconds()},
			Alignment:  &SubtaskAlignment{Duration: a.Alignment.Milliseconds()},
			StartDelay: a.StartDelay.Milliseconds(),
		}
		d.Subtasks = append(d.Subtasks, sub)
		d.StateSize += a.StateSize
		d.CheckpointedSize += a.CheckpointedSize
		state.add(a.StateSize)
		checkpointed.add(a.CheckpointedSize)
		e2e.add(sub.EndToEndDuration)
		syncs.add(sub.Checkpoint.Sync)
		asyncs.add(sub.Checkpoint.Async)
		aligns.add(sub.Alignment.Duration)
		delays.add(sub.StartDelay)
	}
	if !latest.IsZero() {
		d.LatestAckTimestamp = millis(latest)
		d.EndToEndDuration = latest.Sub(c.trigger).Milliseconds()
	}
	var zero series
	d.Summary = TaskCheckpointSummary{
		CheckpointedSize: checkpointed.summary(), StateSize: state.summary(), EndToEndDuration: e2e.summary(),
		CheckpointDuration: DurationSummary{Sync: syncs.summary(), Async: asyncs.summary()},
		Alignment: AlignmentSummary{
			Buffered: zero.summary(), Processed: zero.summary(), Persisted: zero.summary(), Duration: aligns.summary(),
		},
		StartDelay: delays.summary(),
	}
	return d
}

// statistics returns the whole tracker in Flink's shape, history newest first.
func (cs *checkpoints) statistics() CheckpointingStatistics {
	var zero series
	out := CheckpointingStatistics{
		Counts: cs.counts,
		Summary: Summary{
			CheckpointedSize: cs.checkpointedSizes.summary(), StateSize: cs.stateSizes.summary(),
			EndToEndDuration: cs.durations.summary(), AlignmentBuffered: zero.summary(),
			ProcessedData: zero.summary(), PersistedData: zero.summary(),
		},
		History: []CheckpointStatistics{},
	}
	out.Latest.Restored = cs.restored
	for _, p := range []struct {
		c   *cpStats
		dst **CheckpointStatistics
	}{{cs.latestCompleted, &out.Latest.Completed}, {cs.latestSavepoint, &out.Latest.Savepoint}, {cs.latestFailed, &out.Latest.Failed}} {
		if p.c != nil {
			v := p.c.view()
			*p.dst = &v
		}
	}
	for i := len(cs.order) - 1; i >= 0; i-- {
		out.History = append(out.History, cs.byID[cs.order[i]].view())
	}
	return out
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

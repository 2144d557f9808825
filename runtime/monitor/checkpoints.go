package monitor

import (
	"slices"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// Kind says what a checkpoint is.
type Kind int

const (
	// Checkpoint is a periodic (or final) checkpoint.
	Checkpoint Kind = iota
	// Savepoint is a savepoint the job goes on after.
	Savepoint
	// SyncSavepoint is a savepoint that stops the job (stop --savepoint).
	SyncSavepoint
)

func (k Kind) checkpointType() string {
	switch k {
	case Savepoint:
		return TypeSavepoint
	case SyncSavepoint:
		return TypeSyncSavepoint
	}
	return TypeCheckpoint
}

// Ack is one subtask's acknowledgement of a checkpoint, as the coordinator receives it.
type Ack struct {
	// At is when the acknowledgement arrived; the Monitor's clock when zero.
	At time.Time
	// Sync is the synchronous part of the subtask's snapshot (processing paused), Async the
	// upload that followed while processing went on.
	Sync, Async time.Duration
	// Alignment is the time from the checkpoint's first barrier reaching the subtask to
	// the last (0 for a subtask with one input).
	Alignment time.Duration
	// StartDelay is the time from the trigger to the first barrier reaching the subtask,
	// when the runtime measures it.
	StartDelay time.Duration
	// StateSize is the bytes of state the subtask's part references; CheckpointedSize the
	// bytes it uploaded for this checkpoint (less for an incremental snapshot).
	StateSize, CheckpointedSize int64
}

// Completed describes a completed checkpoint.
type Completed struct {
	// StateSize is the whole state the checkpoint references (Metadata.StateSize);
	// CheckpointedSize what this checkpoint uploaded (Metadata.AddedBytes).
	StateSize, CheckpointedSize int64
	// ExternalPath is the checkpoint's pointer.
	ExternalPath string
}

// CompletedFrom describes the completed checkpoint whose metadata is m and pointer
// pointer, with the sizes `runner checkpoints list` shows for it.
func CompletedFrom(m *checkpoint.Metadata, pointer string) Completed {
	return Completed{StateSize: m.StateSize(), CheckpointedSize: m.AddedBytes, ExternalPath: pointer}
}

// CheckpointTriggered records that checkpoint id was triggered at at (the Monitor's clock
// when zero).
func (m *Monitor) CheckpointTriggered(id int64, kind Kind, at time.Time) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.get(id, m.at(at))
	c.kind = kind
	c.tasks = m.info.Tasks
}

// SubtaskAcknowledged records subtask's acknowledgement of checkpoint id in task (the id of
// the operator heading it). Acknowledgements of checkpoints no longer in progress are
// ignored.
func (m *Monitor) SubtaskAcknowledged(id int64, task string, subtask int, ack Ack) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cps.byID[id]
	if c == nil || c.status != StatusInProgress {
		return
	}
	ack.At = m.at(ack.At)
	if c.acks[task] == nil {
		c.acks[task] = map[int]Ack{}
	}
	c.acks[task][subtask] = ack
	if ack.At.After(c.latestAck) {
		c.latestAck = ack.At
	}
}

// CheckpointCompleted records that checkpoint id completed at at (its metadata is
// published).
func (m *Monitor) CheckpointCompleted(id int64, at time.Time, done Completed) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.end(id, at, StatusCompleted)
	if c == nil {
		return
	}
	m.cps.counts.Completed++
	c.stateSize, c.checkpointedSize, c.path = done.StateSize, done.CheckpointedSize, done.ExternalPath
	m.cps.durations.add(c.duration())
	m.cps.stateSizes.add(c.stateSize)
	m.cps.checkpointedSizes.add(c.checkpointedSize)
	if c.kind == Checkpoint {
		m.cps.latestCompleted = c
	} else {
		m.cps.latestSavepoint = c
	}
}

// CheckpointFailed records that checkpoint id failed (declined, expired, or its metadata
// could not be published) at at, and why.
func (m *Monitor) CheckpointFailed(id int64, at time.Time, reason string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.end(id, at, StatusFailed)
	if c == nil {
		return
	}
	m.cps.counts.Failed++
	c.failure = reason
	c.stateSize, c.checkpointedSize = c.ackedSizes()
	m.cps.latestFailed = c
}

// end moves checkpoint id, in progress, to status at at (the clock when zero), and returns
// it; nil when it had already ended. A checkpoint the Monitor never heard of counts as
// triggered at at. m.mu is held.
func (m *Monitor) end(id int64, at time.Time, status string) *cpStats {
	at = m.at(at)
	c := m.cps.get(id, at)
	if c.status != StatusInProgress {
		return nil
	}
	m.cps.counts.InProgress--
	c.status, c.end = status, at
	return c
}

// CheckpointDiscarded records that retention disposed of completed checkpoint id.
func (m *Monitor) CheckpointDiscarded(id int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range []*cpStats{m.cps.byID[id], m.cps.latestCompleted, m.cps.latestSavepoint} {
		if c != nil && c.id == id && c.status == StatusCompleted {
			c.discarded = true
		}
	}
}

// RestoredFrom records that the job was restored at at from checkpoint (or savepoint) id
// at pointer.
func (m *Monitor) RestoredFrom(id int64, at time.Time, pointer string, savepoint bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cps.counts.Restored++
	m.cps.restored = &RestoredCheckpoint{ID: id, RestoreTimestamp: millis(m.at(at)), IsSavepoint: savepoint, ExternalPath: pointer}
}

// at returns t, or the Monitor's clock when t is zero.
func (m *Monitor) at(t time.Time) time.Time {
	if t.IsZero() {
		return m.now()
	}
	return t
}

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
	kind                    Kind
	status                  string
	trigger, latestAck, end time.Time
	stateSize               int64
	checkpointedSize        int64
	path                    string
	discarded               bool
	failure                 string
	tasks                   []TaskInfo
	acks                    map[string]map[int]Ack
}

// get returns checkpoint id, adding it in progress (triggered at at) when it is new.
func (cs *checkpoints) get(id int64, at time.Time) *cpStats {
	if c := cs.byID[id]; c != nil {
		return c
	}
	c := &cpStats{id: id, status: StatusInProgress, trigger: at, acks: map[string]map[int]Ack{}}
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
		IsSavepoint: c.kind != Checkpoint, TriggerTimestamp: millis(c.trigger),
		CheckpointType: c.kind.checkpointType(), Tasks: map[string]TaskCheckpointStatistics{},
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

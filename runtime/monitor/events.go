package monitor

import "github.com/flowstate/flowstate/runtime/dataflow"

// Events returns m as the events of a run (dataflow.Events): the runner passes it to
// dataflow.Run, so the engine reports its checkpoints and record counts to m without
// importing the monitor. A nil m returns nil: the run reports nothing.
func (m *Monitor) Events() dataflow.Events {
	if m == nil {
		return nil
	}
	return events{m}
}

// events is a Monitor as dataflow.Events: the Monitor's own methods, but for Subtask,
// which hands out the subtask's counters as dataflow.SubtaskEvents.
type events struct{ *Monitor }

var _ dataflow.Events = events{}

// Subtask implements dataflow.Events.
func (e events) Subtask(op string, index int) dataflow.SubtaskEvents {
	return e.Monitor.Subtask(op, index)
}

package stateproc

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// Entry is one keyed state entry of a checkpoint.
type Entry struct {
	// Subtask is the index of the subtask whose handle holds it.
	Subtask int
	// KeyGroup is the key group its state key is stored under.
	KeyGroup int
	// State is the name of the state it belongs to.
	State string
	// Key is the record key; Value the encoded value. Both are the callback's only until it
	// returns.
	Key, Value []byte
	// Size is the bytes it takes as stored: its state key (key group, state name, record
	// key) and its value.
	Size int
}

// Entries calls fn for every keyed state entry of operator op, subtask by subtask (by
// index), handle by handle: a canonical handle's entries in the order its streams hold
// them, a LevelDBIncremental handle's in the byte order of their state keys. A handle in a
// format this package does not decode fails with an error wrapping ErrNotDecoded; every
// error names the operator and subtask.
func (c *Checkpoint) Entries(ctx context.Context, op *checkpoint.OperatorState, fn func(e Entry) error) error {
	r := checkpoint.Reader{Access: c.Access}
	for _, st := range byIndex(op.Subtasks) {
		for _, h := range st.Keyed {
			err := readHandle(ctx, r, h, func(k, v []byte) error {
				g, name, key, err := state.SplitStateKey(k)
				if err != nil {
					return fmt.Errorf("key %x: %w: %w", k, err, sdk.ErrCorrupt)
				}
				return fn(Entry{Subtask: st.Index, KeyGroup: g, State: name, Key: key, Value: v, Size: len(k) + len(v)})
			})
			if err != nil {
				return fmt.Errorf("%s: operator %q subtask %d: %w", c, op.ID, st.Index, err)
			}
		}
	}
	return nil
}

// byIndex returns the subtasks sorted by index (metadata lists them in the order they
// acknowledged the checkpoint).
func byIndex(subtasks []checkpoint.SubtaskState) []checkpoint.SubtaskState {
	out := append([]checkpoint.SubtaskState(nil), subtasks...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// stateTypes returns the types of the states op declared, by name.
func stateTypes(op *checkpoint.OperatorState) map[string]string {
	out := map[string]string{}
	for _, s := range op.States {
		out[s.Name] = s.Type
	}
	return out
}

// hasKeyedState reports whether op declared keyed states or holds keyed state handles.
func hasKeyedState(op *checkpoint.OperatorState) bool {
	if len(op.States) > 0 {
		return true
	}
	for _, st := range op.Subtasks {
		if len(st.Keyed) > 0 {
			return true
		}
	}
	return false
}

// quoteList formats names as "a", "b", "c" (sorted), or "none".
func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

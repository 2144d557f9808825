package stateproc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// MaxKeyGroups is the largest max parallelism RescaleKeys writes, as job.max-parallelism
// allows.
const MaxKeyGroups = 1 << 15

// rescaledFile is the name of the one stream of each handle RescaleKeys writes.
const rescaledFile = "state"

// RescaleKeys writes a savepoint of c whose keyed state is split into maxParallelism key
// groups: every entry's key group is recomputed from its record key (state.KeyGroupFor),
// and each keyed operator gets one handle per subtask, over the key groups that subtask
// owns under the new max parallelism (state.KeyGroupRangeFor) at the operator's
// parallelism, in sdk.FormatCanonical. Non-keyed operator state is copied unchanged. The
// savepoint keeps c's checkpoint id, so a restore from it treats the job's committed
// output as a restore from c would; its metadata records maxParallelism.
//
// It writes through c's storage, as a savepoint of c's job, under target or the default
// savepoint directory, and returns the savepoint's location. On failure it disposes of
// what it wrote.
func (c *Checkpoint) RescaleKeys(ctx context.Context, maxParallelism int, target string) (sdk.CompletedCheckpointStorageLocation, error) {
	var none sdk.CompletedCheckpointStorageLocation
	m := c.Metadata
	if maxParallelism < 1 || maxParallelism > MaxKeyGroups {
		return none, fmt.Errorf("max parallelism %d: must be between 1 and %d", maxParallelism, MaxKeyGroups)
	}
	for i := range m.Operators {
		op := &m.Operators[i]
		if hasKeyedState(op) && op.Parallelism > maxParallelism {
			return none, fmt.Errorf("max parallelism %d: operator %q of %s has parallelism %d, more than the key groups", maxParallelism, op.ID, c, op.Parallelism)
		}
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				if !Decodes(h.Format) {
					return none, fmt.Errorf("%s: operator %q subtask %d: keyed state in format %q: %w", c, op.ID, st.Index, h.Format, ErrNotDecoded)
				}
			}
		}
	}
	access, err := jobAccess(ctx, c.Storage, m.JobID)
	if err != nil {
		return none, err
	}
	defer access.Close()
	loc, err := access.InitializeLocationForSavepoint(ctx, m.CheckpointID, target)
	if err != nil {
		return none, fmt.Errorf("savepoint of %s: %w", c, err)
	}
	out := &checkpoint.Metadata{
		Version: checkpoint.MetadataVersion, JobID: m.JobID, CheckpointID: m.CheckpointID, Savepoint: true,
		Time: time.Now().UTC(), Backend: m.Backend, MaxParallelism: maxParallelism, JobType: m.JobType,
	}
	streams := checkpoint.Checksummed(loc, nil)
	for i := range m.Operators {
		op, err := c.rescaleOperator(ctx, &m.Operators[i], streams, maxParallelism)
		if err != nil {
			return none, errors.Join(err, disposeFailed(ctx, loc))
		}
		out.Operators = append(out.Operators, *op)
	}
	out.SetDelta(nil)
	done, err := checkpoint.Publish(ctx, loc, out)
	if err != nil {
		return none, errors.Join(fmt.Errorf("savepoint of %s: %w", c, err), disposeFailed(ctx, loc))
	}
	return done, nil
}

// disposeFailed deletes what a failed RescaleKeys wrote.
func disposeFailed(ctx context.Context, loc sdk.CheckpointStorageLocation) error {
	if err := loc.DisposeOnFailure(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("dispose of the incomplete savepoint %s: %w", loc.LocationReference(), err)
	}
	return nil
}

// rescaleOperator returns op with its keyed state rewritten for maxP key groups.
func (c *Checkpoint) rescaleOperator(ctx context.Context, op *checkpoint.OperatorState, streams sdk.CheckpointStreamFactory, maxP int) (*checkpoint.OperatorState, error) {
	out := &checkpoint.OperatorState{ID: op.ID, Parallelism: op.Parallelism, Type: op.Type, Finished: op.Finished,
		States: append([]checkpoint.StateShape(nil), op.States...)}
	for _, st := range op.Subtasks {
		out.Subtasks = append(out.Subtasks, checkpoint.SubtaskState{Index: st.Index, Operator: st.Operator})
	}
	if !hasKeyedState(op) {
		return out, nil
	}
	writers := make([]*subtaskWriter, op.Parallelism)
	defer func() {
		for _, w := range writers {
			if w != nil {
				w.stream.Close() // after CloseAndGetHandle it does nothing
			}
		}
	}()
	for i := range writers {
		s, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
		if err != nil {
			return nil, fmt.Errorf("operator %q subtask %d: open stream: %w", op.ID, i, err)
		}
		writers[i] = &subtaskWriter{stream: s, kv: kvstream.NewWriter(s), groups: state.KeyGroupRangeFor(maxP, op.Parallelism, i)}
	}
	var key []byte
	err := c.Entries(ctx, op, func(e Entry) error {
		g := state.KeyGroupFor(e.Key, maxP)
		w := writers[state.SubtaskForKeyGroup(maxP, op.Parallelism, g)]
		if !w.groups.Contains(g) {
			return fmt.Errorf("key group %d is routed to a subtask owning %s", g, w.groups)
		}
		key = state.AppendStateKey(key[:0], g, e.State, e.Key)
		return w.kv.Write(key, e.Value)
	})
	if err != nil {
		return nil, err
	}
	for i, w := range writers {
		if err := w.kv.Close(); err != nil {
			return nil, fmt.Errorf("operator %q subtask %d: %w", op.ID, i, err)
		}
		h, err := w.stream.CloseAndGetHandle(ctx)
		if err != nil {
			return nil, fmt.Errorf("operator %q subtask %d: close stream: %w", op.ID, i, err)
		}
		sub := subtaskAt(out, i)
		sub.Keyed = []sdk.KeyedStateHandle{{KeyGroups: w.groups, Format: sdk.FormatCanonical,
			Files: []sdk.NamedStateHandle{{Name: rescaledFile, Handle: h}}}}
	}
	return out, nil
}

// subtaskWriter writes the rescaled keyed state of one subtask.
type subtaskWriter struct {
	stream sdk.CheckpointStateOutputStream
	kv     *kvstream.Writer
	groups sdk.KeyGroupRange
}

// subtaskAt returns the state of subtask i of op, adding it when op has none.
func subtaskAt(op *checkpoint.OperatorState, i int) *checkpoint.SubtaskState {
	for j := range op.Subtasks {
		if op.Subtasks[j].Index == i {
			return &op.Subtasks[j]
		}
	}
	op.Subtasks = append(op.Subtasks, checkpoint.SubtaskState{Index: i})
	return &op.Subtasks[len(op.Subtasks)-1]
}

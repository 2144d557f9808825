package monitor

import (
	"net/http"
	"testing"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/sdk"
)

// TestCompletedFromMetadata: the sizes the REST answer gives a completed checkpoint are
// those `runner checkpoints list` shows for it: SIZE, every byte the checkpoint references
// (inline operator state and keyed streams, shared ones too), and ADDED, less the shared
// streams the previous checkpoint already referenced.
func TestCompletedFromMetadata(t *testing.T) {
	shared := func(ref string, size int64) sdk.NamedStateHandle {
		return sdk.NamedStateHandle{Handle: sdk.StreamStateHandle{Ref: ref, Size: size, Scope: sdk.ScopeShared}}
	}
	exclusive := func(ref string, size int64) sdk.NamedStateHandle {
		return sdk.NamedStateHandle{Handle: sdk.StreamStateHandle{Ref: ref, Size: size, Scope: sdk.ScopeExclusive}}
	}
	meta := func(id int64, files ...sdk.NamedStateHandle) *checkpoint.Metadata {
		return &checkpoint.Metadata{CheckpointID: id, Operators: []checkpoint.OperatorState{
			{ID: "source", Subtasks: []checkpoint.SubtaskState{{Index: 0, Operator: make([]byte, 24)}}},
			{ID: "count", Subtasks: []checkpoint.SubtaskState{{Index: 0, Keyed: []sdk.KeyedStateHandle{{Files: files}}}}},
		}}
	}
	prev := meta(1, shared("base", 5000), exclusive("x1", 300))
	cur := meta(2, shared("base", 5000), shared("delta-2", 700), exclusive("x2", 310))
	cur.SetDelta(prev)
	const wantSize = 24 + 5000 + 700 + 310 // operator state, base, delta, exclusive
	const wantAdded = wantSize - 5000      // base was uploaded by checkpoint 1

	clock := newFakeClock()
	m := startJob(clock)
	m.CheckpointTriggered(2, dataflow.KindCheckpoint, clock.Now())
	m.CheckpointCompleted(2, clock.Now(), dataflow.CompletedStatsFrom(cur, "file:///ckpt/orders/chk-2"))
	srv := serve(t, m)
	v := getJSONT(t, srv.URL+"/jobs/orders/checkpoints/details/2", http.StatusOK)
	if got := num(t, v, "state_size"); got != wantSize {
		t.Errorf("state_size = %v, want %d", got, wantSize)
	}
	if got := num(t, v, "checkpointed_size"); got != wantAdded {
		t.Errorf("checkpointed_size = %v, want %d", got, wantAdded)
	}
	if got := str(t, v, "external_path"); got != "file:///ckpt/orders/chk-2" {
		t.Errorf("external_path = %q", got)
	}
}

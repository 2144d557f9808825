package sdktest

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/ref"
)

// TestBenchHelpers checks the state the benchmarks write and that DiscardStreams counts the
// bytes a snapshot writes.
func TestBenchHelpers(t *testing.T) {
	if g := sdk.KeyGroupOf(UserKey(130)); g != 2 {
		t.Fatalf("UserKey(130) is in key group %d, want 2", g)
	}
	p := fullParams("bench-helpers")
	kb := OpenKeyed(t, ref.Backend{}, p)
	WriteUserKeys(t, kb, 5000, 7)
	want := make(Model)
	for i := range 5000 {
		want[string(UserKey(i))] = make([]byte, 7)
	}
	CheckContents(t, kb, want)

	mem := NewMemoryStreams()
	TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, mem)
	snap := startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 2})
	d := &DiscardStreams{}
	handles, err := snap.Write(context.Background(), d)
	snap.Release()
	if err != nil {
		t.Fatalf("Snapshot.Write to DiscardStreams: %v", err)
	}
	if d.Bytes() != mem.Size() || d.Bytes() == 0 {
		t.Fatalf("DiscardStreams counted %d bytes, MemoryStreams stored %d", d.Bytes(), mem.Size())
	}
	if len(handles) != 1 || handles[0].Files[0].Handle.Size != d.Bytes() {
		t.Fatalf("handles %+v, want one whose stream has Size %d", handles, d.Bytes())
	}
}

// BenchmarkRefBackend runs the kit's benchmarks on the reference backend, in-process: the
// baseline a plugin's own BenchStateBackend compares with.
func BenchmarkRefBackend(b *testing.B) {
	BenchStateBackend(b, func(*testing.B) sdk.StateBackend { return ref.Backend{} })
}

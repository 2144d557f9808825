package sdktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func restoreChecks(t *testing.T, factory BackendFactory) {
	localRestoreChecks(t, factory)
	t.Run("RescaleOutToTwoSubtasks", func(t *testing.T) {
		streams := NewMemoryStreams()
		m, handles := snapshotSubtasks(t, factory(t), "rescale-out", 1, 4000, streams)
		checkRestoredSubtasks(t, factory(t), "rescale-out", 2, handles, streams, m)
	})
	t.Run("RescaleInFromTwoSubtasks", func(t *testing.T) {
		streams := NewMemoryStreams()
		m, handles := snapshotSubtasks(t, factory(t), "rescale-in", 2, 2000, streams)
		checkRestoredSubtasks(t, factory(t), "rescale-in", 1, handles, streams, m)
	})
	t.Run("RescaleFromTwoToThreeSubtasks", func(t *testing.T) {
		// Each new subtask's key groups overlap one or both old ones in part.
		streams := NewMemoryStreams()
		m, handles := snapshotSubtasks(t, factory(t), "rescale-2-3", 2, 1500, streams)
		checkRestoredSubtasks(t, factory(t), "rescale-2-3", 3, handles, streams, m)
	})
	t.Run("UnknownFormatIsUnsupported", func(t *testing.T) {
		h, err := restoreUnknownFormat(t, factory(t))
		if err == nil {
			t.Fatalf("Restore of format %q succeeded, want an error wrapping sdk.ErrUnsupported", h.Format)
		}
		if !errors.Is(err, sdk.ErrUnsupported) {
			t.Fatalf("Restore of format %q: %v; want an error wrapping sdk.ErrUnsupported", h.Format, err)
		}
	})
	t.Run("UnknownFormatErrorNamesFormatAndPlugin", func(t *testing.T) {
		sb := factory(t)
		h, err := restoreUnknownFormat(t, sb)
		name := sb.PluginInfo().Name
		if err == nil || !strings.Contains(err.Error(), h.Format) || !strings.Contains(err.Error(), name) {
			t.Fatalf("Restore of format %q: %v; want an error naming the format and the plugin %q", h.Format, err, name)
		}
	})
	t.Run("CanonicalStreamWrittenWithKVStream", func(t *testing.T) {
		m := canonicalFixture()
		streams := NewMemoryStreams()
		h := canonicalHandle(t, streams, fullParams("").KeyGroups, m)
		q := Params("restore-canonical", 1, 2)
		kb := restoreFresh(t, factory, q, []sdk.KeyedStateHandle{h}, streams)
		CheckContents(t, kb, m.Within(q.KeyGroups))
	})
	t.Run("CanonicalHandleWithSeveralFiles", func(t *testing.T) {
		m := canonicalFixture()
		lo, hi := m.Within(sdk.KeyGroupRange{Start: 0, End: 64}), m.Within(sdk.KeyGroupRange{Start: 64, End: 128})
		streams := NewMemoryStreams()
		a := canonicalHandle(t, streams, fullParams("").KeyGroups, lo)
		b := canonicalHandle(t, streams, fullParams("").KeyGroups, hi)
		a.Files = append(a.Files, sdk.NamedStateHandle{Name: "part-2", Handle: b.Files[0].Handle})
		kb := restoreFresh(t, factory, fullParams("restore-canonical-files"), []sdk.KeyedStateHandle{a}, streams)
		CheckContents(t, kb, m)
	})
	t.Run("CanonicalStreamWithBadChecksumIsCorrupt", func(t *testing.T) {
		streams := NewMemoryStreams()
		h := canonicalHandle(t, streams, fullParams("").KeyGroups, canonicalFixture())
		h.Files[0].Handle.Checksum ^= 0x5a5a
		kb := OpenKeyed(t, factory(t), fullParams("restore-corrupt"))
		err := kb.Restore(context.Background(), []sdk.KeyedStateHandle{h}, streams)
		if !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("Restore of a stream whose checksum does not match: %v; want an error wrapping sdk.ErrCorrupt", err)
		}
	})
	t.Run("CanonicalStreamWithDamagedRecordsIsCorrupt", func(t *testing.T) {
		// The handle's checksum matches the damaged bytes: only the stream's own checksum
		// can tell.
		b := canonicalBytes(t, canonicalFixture())
		b[len(b)/2] ^= 0x55
		streams := NewMemoryStreams()
		h := sdk.KeyedStateHandle{
			KeyGroups: fullParams("").KeyGroups,
			Format:    sdk.FormatCanonical,
			Files:     []sdk.NamedStateHandle{{Name: "state", Handle: streams.Put(sdk.ScopeExclusive, b)}},
		}
		kb := OpenKeyed(t, factory(t), fullParams("restore-damaged"))
		err := kb.Restore(context.Background(), []sdk.KeyedStateHandle{h}, streams)
		if !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("Restore of a canonical stream with a damaged record: %v; want an error wrapping sdk.ErrCorrupt", err)
		}
	})
	t.Run("NoHandlesGivesEmptyState", func(t *testing.T) {
		kb := restoreFresh(t, factory, fullParams("restore-nothing"), nil, NewMemoryStreams())
		CheckContents(t, kb, Model{})
	})
}

// restoreUnknownFormat restores a handle of a format no backend knows into a new keyed
// backend of sb and returns the handle and Restore's error.
func restoreUnknownFormat(t *testing.T, sb sdk.StateBackend) (sdk.KeyedStateHandle, error) {
	t.Helper()
	kb := OpenKeyed(t, sb, fullParams("restore-unknown"))
	streams := NewMemoryStreams()
	h := sdk.KeyedStateHandle{
		KeyGroups: fullParams("").KeyGroups,
		Format:    "sdktest-no-such-format-v0",
		Files:     []sdk.NamedStateHandle{{Name: "data", Handle: streams.Put(sdk.ScopeExclusive, []byte("not a known format"))}},
	}
	return h, kb.Restore(context.Background(), []sdk.KeyedStateHandle{h}, streams)
}

// snapshotSubtasks fills n subtasks of operator op of sb with keys+i keys each (i the
// subtask), snapshots them into streams and returns their state and handles.
func snapshotSubtasks(t *testing.T, sb sdk.StateBackend, op string, n, keys int, streams *MemoryStreams) (Model, []sdk.KeyedStateHandle) {
	t.Helper()
	m := make(Model)
	var handles []sdk.KeyedStateHandle
	for i := 0; i < n; i++ {
		q := Params(op, i, n)
		kb := OpenKeyed(t, sb, q)
		Fill(t, kb, m, q.KeyGroups, keys+i, fmt.Sprintf("subtask-%d", i))
		handles = append(handles, TakeSnapshot(t, kb, q, sdk.SnapshotOptions{CheckpointID: 1}, streams)...)
	}
	return m, handles
}

// checkRestoredSubtasks restores handles into each of n subtasks of operator op of sb, in a
// subtest each, and checks that each holds the part of m in its own key groups.
func checkRestoredSubtasks(t *testing.T, sb sdk.StateBackend, op string, n int, handles []sdk.KeyedStateHandle, streams *MemoryStreams, m Model) {
	t.Helper()
	for i := 0; i < n; i++ {
		q := Params(op, i, n)
		t.Run(fmt.Sprintf("Subtask%dOf%dKeepsKeyGroups%s", i, n, q.KeyGroups), func(t *testing.T) {
			CheckContents(t, OpenRestored(t, sb, q, handles, streams), m.Within(q.KeyGroups))
		})
	}
}

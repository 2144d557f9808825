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
	t.Run("RescaleOutToTwoSubtasks", func(t *testing.T) {
		p := fullParams("rescale-out")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 4000, "v1")
		streams := NewMemoryStreams()
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		sb := factory(t)
		for i := 0; i < 2; i++ {
			q := Params("rescale-out", i, 2)
			t.Run(fmt.Sprintf("Subtask%dKeepsKeyGroups%s", i, q.KeyGroups), func(t *testing.T) {
				half := OpenKeyed(t, sb, q)
				if err := half.Restore(context.Background(), handles, streams); err != nil {
					t.Fatalf("Restore into subtask %d of 2: %v", i, err)
				}
				CheckContents(t, half, m.Within(q.KeyGroups))
			})
		}
	})
	t.Run("RescaleInFromTwoSubtasks", func(t *testing.T) {
		sb := factory(t)
		streams := NewMemoryStreams()
		all := make(Model)
		var handles []sdk.KeyedStateHandle
		for i := 0; i < 2; i++ {
			q := Params("rescale-in", i, 2)
			kb := OpenKeyed(t, sb, q)
			Fill(t, kb, all, q.KeyGroups, 2000+i, fmt.Sprintf("subtask-%d", i))
			handles = append(handles, TakeSnapshot(t, kb, q, sdk.SnapshotOptions{CheckpointID: 1}, streams)...)
		}
		CheckContents(t, restoreFresh(t, factory, fullParams("rescale-in"), handles, streams), all)
	})
	t.Run("RescaleFromTwoToThreeSubtasks", func(t *testing.T) { checkRescaleTwoToThree(t, factory) })
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

// checkRescaleTwoToThree restores the snapshots of two subtasks into three, whose key group
// ranges each overlap one or both of the old ones in part.
func checkRescaleTwoToThree(t *testing.T, factory BackendFactory) {
	sb := factory(t)
	streams := NewMemoryStreams()
	all := make(Model)
	var handles []sdk.KeyedStateHandle
	for i := 0; i < 2; i++ {
		q := Params("rescale-2-3", i, 2)
		kb := OpenKeyed(t, sb, q)
		Fill(t, kb, all, q.KeyGroups, 1500, fmt.Sprintf("subtask-%d", i))
		handles = append(handles, TakeSnapshot(t, kb, q, sdk.SnapshotOptions{CheckpointID: 1}, streams)...)
	}
	for i := 0; i < 3; i++ {
		q := Params("rescale-2-3", i, 3)
		t.Run(fmt.Sprintf("Subtask%dKeepsKeyGroups%s", i, q.KeyGroups), func(t *testing.T) {
			CheckContents(t, restoreFresh(t, factory, q, handles, streams), all.Within(q.KeyGroups))
		})
	}
}

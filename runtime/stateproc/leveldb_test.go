package stateproc_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/kvstream"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestLevelDBIncrementalIsThePluginsFormat checks the format description against the
// plugin: the same name, and every incremental handle of a word count's checkpoints
// decodes to exactly what the plugin's own Restore loads from it.
func TestLevelDBIncrementalIsThePluginsFormat(t *testing.T) {
	if stateproc.LevelDBIncremental != leveldb.FormatIncremental {
		t.Fatalf("stateproc decodes %q, the leveldb plugin writes %q", stateproc.LevelDBIncremental, leveldb.FormatIncremental)
	}
	f := runWordCount(t, config.LevelDB, true, 200<<10, 10000, 0)
	ldb := leveldb.New()
	if err := ldb.Configure(bg, sdk.Options{"localdir": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	withDeltas := 0
	for _, cp := range f.done {
		c := f.open(t, cp.Location.ExternalPointer)
		op, err := c.Operator("count")
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				if h.Format != leveldb.FormatIncremental {
					t.Fatalf("%s: handle in format %q", c, h.Format)
				}
				if len(h.Files) > 1 {
					withDeltas++
				}
				one := &checkpoint.OperatorState{ID: op.ID, Subtasks: []checkpoint.SubtaskState{{Index: st.Index, Keyed: []sdk.KeyedStateHandle{h}}}}
				var decoded []sdk.KV
				err := c.Entries(bg, one, func(e stateproc.Entry) error {
					decoded = append(decoded, sdk.KV{Key: state.AppendStateKey(nil, e.KeyGroup, e.State, e.Key), Value: bytes.Clone(e.Value)})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				p := sdktest.Params("count", st.Index, 2)
				p.KeyGroups = h.KeyGroups
				restored := scanAll(t, sdktest.OpenRestored(t, ldb, p, []sdk.KeyedStateHandle{h}, checkpoint.Reader{Access: f.access}))
				if len(decoded) != len(restored) {
					t.Fatalf("%s subtask %d: decoded %d entries, the plugin restores %d", c, st.Index, len(decoded), len(restored))
				}
				for i := range decoded { // both in key order
					if !bytes.Equal(decoded[i].Key, restored[i].Key) || !bytes.Equal(decoded[i].Value, restored[i].Value) {
						t.Fatalf("%s subtask %d: entry %d decoded as %x=%x, restored as %x=%x", c, st.Index, i, decoded[i].Key, decoded[i].Value, restored[i].Key, restored[i].Value)
					}
				}
			}
		}
	}
	if withDeltas == 0 {
		t.Fatalf("none of %d checkpoints has a handle with deltas: the test checked no delta", len(f.done))
	}
	t.Logf("%d checkpoints, %d handles with deltas", len(f.done), withDeltas)
}

// scanAll reads every pair of kb in key order.
func scanAll(t *testing.T, kb sdk.KeyedStateBackend) []sdk.KV {
	t.Helper()
	var out []sdk.KV
	var from []byte
	for {
		kvs, err := kb.Scan(bg, from, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(kvs) == 0 {
			return out
		}
		out = append(out, kvs...)
		from = append(bytes.Clone(kvs[len(kvs)-1].Key), 0)
	}
}

// inlineStream returns an inline handle of the canonical stream of pairs.
func inlineStream(t *testing.T, name string, pairs ...[2]string) sdk.NamedStateHandle {
	t.Helper()
	var b bytes.Buffer
	w := kvstream.NewWriter(&b)
	for _, p := range pairs {
		if err := w.Write([]byte(p[0]), []byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return sdk.NamedStateHandle{Name: name, Handle: sdk.StreamStateHandle{Inline: b.Bytes(), Size: int64(b.Len()), Checksum: host.Checksum(b.Bytes())}}
}

// handCheckpoint is a checkpoint of one operator with one handle, written by hand.
func handCheckpoint(h sdk.KeyedStateHandle) *stateproc.Checkpoint {
	return &stateproc.Checkpoint{Pointer: "hand", Metadata: &checkpoint.Metadata{JobID: "hand", MaxParallelism: 128, Operators: []checkpoint.OperatorState{{
		ID: "op", Parallelism: 1, States: []checkpoint.StateShape{{Name: "s", Type: "value[state.stringCodec]"}},
		Subtasks: []checkpoint.SubtaskState{{Index: 0, Keyed: []sdk.KeyedStateHandle{h}}},
	}}}}
}

// TestLevelDBIncrementalDeltas decodes a handle written by hand from the format's
// description: puts and deletes of later deltas win over earlier files, and a delta value
// without an operation byte, or files out of order, are corrupt.
func TestLevelDBIncrementalDeltas(t *testing.T) {
	k := func(key string) string { return string(state.AppendStateKey(nil, 3, "s", []byte(key))) }
	all := sdk.KeyGroupRange{Start: 0, End: 128}
	h := sdk.KeyedStateHandle{KeyGroups: all, Format: stateproc.LevelDBIncremental, Files: []sdk.NamedStateHandle{
		inlineStream(t, "base", [2]string{k("a"), "1"}, [2]string{k("b"), "2"}, [2]string{k("c"), "3"}),
		inlineStream(t, "delta-1", [2]string{k("b"), "P22"}, [2]string{k("c"), "D"}),
		inlineStream(t, "delta-2", [2]string{k("a"), "D"}, [2]string{k("d"), "P4"}, [2]string{k("e"), "P"}),
	}}
	c := handCheckpoint(h)
	got := map[string]string{}
	err := c.Entries(bg, &c.Metadata.Operators[0], func(e stateproc.Entry) error {
		if e.KeyGroup != 3 || e.State != "s" {
			t.Fatalf("entry %+v: want key group 3, state s", e)
		}
		got[string(e.Key)] = string(e.Value)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"b": "22", "d": "4", "e": ""}
	if len(got) != len(want) || got["b"] != "22" || got["d"] != "4" || got["e"] != "" {
		t.Fatalf("decoded %v, want %v", got, want)
	}

	bad := h
	bad.Files = []sdk.NamedStateHandle{h.Files[0], inlineStream(t, "delta-1", [2]string{k("b"), "X"})}
	c = handCheckpoint(bad)
	err = c.Entries(bg, &c.Metadata.Operators[0], func(stateproc.Entry) error { return nil })
	if !errors.Is(err, sdk.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(`"delta-1"`)) {
		t.Fatalf("delta value without an operation: %v, want an error wrapping ErrCorrupt naming delta-1", err)
	}
	bad.Files = []sdk.NamedStateHandle{h.Files[0], h.Files[2]}
	c = handCheckpoint(bad)
	if err := c.Entries(bg, &c.Metadata.Operators[0], func(stateproc.Entry) error { return nil }); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("delta-2 right after the base: %v, want ErrCorrupt", err)
	}
}

// TestUnknownFormatIsReportedNotDecoded checks that a handle of a format the runner does
// not decode is reported with its sizes, and that Dump and RescaleKeys refuse it.
func TestUnknownFormatIsReportedNotDecoded(t *testing.T) {
	h := sdk.KeyedStateHandle{KeyGroups: sdk.KeyGroupRange{Start: 0, End: 128}, Format: "other-v1",
		Files: []sdk.NamedStateHandle{inlineStream(t, "blob", [2]string{"x", "y"})}}
	c := handCheckpoint(h)
	rep, err := c.Inspect(bg)
	if err != nil {
		t.Fatal(err)
	}
	hr := rep.Operators[0].Subtasks[0].Handles[0]
	if hr.Decoded || hr.Entries != 0 || hr.Format != "other-v1" || hr.Files[0].Size != h.Files[0].Handle.Size || hr.Files[0].Ref != "inline" {
		t.Fatalf("handle report %+v: want not decoded, with its size", hr)
	}
	if _, err := c.Dump(bg, &bytes.Buffer{}, "op", ""); !errors.Is(err, stateproc.ErrNotDecoded) {
		t.Fatalf("Dump: %v, want ErrNotDecoded", err)
	}
	if _, err := c.RescaleKeys(bg, 256, ""); !errors.Is(err, stateproc.ErrNotDecoded) {
		t.Fatalf("RescaleKeys: %v, want ErrNotDecoded", err)
	}
}

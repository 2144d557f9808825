package boltstate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/examples/thirdparty/boltstate"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

var ctx = context.Background()

// params is one subtask owning every key group of 128.
var params = sdk.KeyedBackendParams{JobID: "job", OperatorID: "count", Parallelism: 1, MaxParallelism: 128,
	KeyGroups: sdk.KeyGroupRange{Start: 0, End: 128}}

// key returns a state key in key group g.
func key(g int, s string) []byte { return append(sdk.KeyGroupPrefix(g), s...) }

// filled returns a keyed backend of sb holding n keys spread over key groups.
func filled(t *testing.T, sb sdk.StateBackend, n int) (sdk.KeyedStateBackend, map[string]string) {
	t.Helper()
	kb, err := sb.CreateKeyedStateBackend(ctx, params)
	if err != nil {
		t.Fatalf("CreateKeyedStateBackend: %v", err)
	}
	t.Cleanup(func() { kb.Close() })
	want := map[string]string{}
	var muts []sdk.Mutation
	for i := 0; i < n; i++ {
		k, v := key(i%128, fmt.Sprintf("word-%d", i)), fmt.Sprintf("%d", i*i)
		muts = append(muts, sdk.Mutation{Key: k, Value: []byte(v)})
		want[string(k)] = v
	}
	if err := kb.Write(ctx, muts); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return kb, want
}

// checkpoint snapshots kb into a new checkpoint id of access a and completes it, with
// metadata naming the stream, as the runner would.
func checkpoint(t *testing.T, kb sdk.KeyedStateBackend, a sdk.CheckpointStorageAccess, id int64, savepointTarget string) (sdk.CompletedCheckpointStorageLocation, []sdk.KeyedStateHandle) {
	t.Helper()
	var loc sdk.CheckpointStorageLocation
	var err error
	if savepointTarget != "" {
		loc, err = a.InitializeLocationForSavepoint(ctx, id, savepointTarget)
	} else {
		loc, err = a.InitializeLocationForCheckpoint(ctx, id)
	}
	if err != nil {
		t.Fatalf("initialize location %d: %v", id, err)
	}
	snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: id, Savepoint: savepointTarget != ""})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	defer snap.Release()
	handles, err := snap.Write(ctx, loc)
	if err != nil {
		t.Fatalf("Snapshot.Write: %v", err)
	}
	out, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatalf("CreateMetadataOutputStream: %v", err)
	}
	out.Write([]byte(handles[0].Files[0].Handle.Ref))
	done, err := out.CloseAndFinalize(ctx)
	if err != nil {
		t.Fatalf("CloseAndFinalize: %v", err)
	}
	return done, handles
}

// restoreInto restores handles into a fresh keyed backend of sb and checks it holds want.
func restoreInto(t *testing.T, sb sdk.StateBackend, handles []sdk.KeyedStateHandle, reader sdk.StateReader, want map[string]string) {
	t.Helper()
	kb, err := sb.CreateKeyedStateBackend(ctx, params)
	if err != nil {
		t.Fatalf("CreateKeyedStateBackend: %v", err)
	}
	defer kb.Close()
	if err := kb.Restore(ctx, handles, reader); err != nil {
		t.Fatalf("Restore into %s: %v", sb.PluginInfo().Name, err)
	}
	got, err := kb.Scan(ctx, nil, nil, len(want)+10)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("restored %s holds %d keys, want %d", sb.PluginInfo().Name, len(got), len(want))
	}
	for _, kv := range got {
		if want[string(kv.Key)] != string(kv.Value) {
			t.Fatalf("restored key %q = %q, want %q", kv.Key, kv.Value, want[string(kv.Key)])
		}
	}
}

// TestCheckpointsOutliveThePlugin writes a checkpoint with one plugin value, drops it
// without closing anything, and finds, resolves and restores it with a new one.
func TestCheckpointsOutliveThePlugin(t *testing.T) {
	dir := t.TempDir()
	opts := sdk.Options{boltstate.OptionLocalDir: t.TempDir(), sdk.OptionCheckpointDir: dir, sdk.OptionDataInlineThreshold: "0"}
	first := boltstate.New()
	if err := first.Configure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	a, err := first.CreateCheckpointStorage(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	kb, want := filled(t, first, 5000)
	done, handles := checkpoint(t, kb, a, 7, "")
	if wantPtr := filepath.Join(dir, "wordcount", "chk-7"); done.ExternalPointer != wantPtr {
		t.Errorf("ExternalPointer = %q, want %q", done.ExternalPointer, wantPtr)
	}
	// An incomplete checkpoint 8 is left behind, as by a crash.
	if _, err := a.InitializeLocationForCheckpoint(ctx, 8); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := os.Stat(filepath.Join(dir, "wordcount", "checkpoints.db")); err != nil {
		t.Fatalf("the job's checkpoint file: %v", err)
	}

	second := boltstate.New()
	if err := second.Configure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	resolved, err := second.ResolveCheckpoint(ctx, "file://"+done.ExternalPointer)
	if err != nil {
		t.Fatalf("ResolveCheckpoint by file URI: %v", err)
	}
	if resolved.CheckpointID != 7 || resolved.ExternalPointer != done.ExternalPointer {
		t.Errorf("resolved %+v, want checkpoint 7 at %q", resolved, done.ExternalPointer)
	}
	b, err := second.CreateCheckpointStorage(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := b.ListCompletedCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].CheckpointID != 7 {
		t.Fatalf("ListCompletedCheckpoints = %+v, want checkpoint 7 only", list)
	}
	if _, err := second.ResolveCheckpoint(ctx, filepath.Join(dir, "wordcount", "chk-8")); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("incomplete checkpoint 8 resolves: %v", err)
	}
	meta := readAll(t, b, resolved.Metadata)
	stream := handles[0].Files[0].Handle
	if string(meta) != stream.Ref {
		t.Fatalf("resolved metadata %q, want %q", meta, stream.Ref)
	}
	r := kvstream.NewReader(bytes.NewReader(readAll(t, b, stream)))
	got := 0
	for {
		k, v, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the checkpoint's canonical stream: %v", err)
		}
		if want[string(k)] != string(v) {
			t.Fatalf("checkpointed key %q = %q, want %q", k, v, want[string(k)])
		}
		got++
	}
	if got != len(want) {
		t.Fatalf("checkpoint holds %d keys, want %d", got, len(want))
	}
}

// readAll reads h through a, verifying its size and checksum as the runner does.
func readAll(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle) []byte {
	t.Helper()
	rc, err := sdktest.AccessReader(a).Open(ctx, h)
	if err != nil {
		t.Fatalf("OpenState(%q): %v", h.Ref, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %q: %v", h.Ref, err)
	}
	return b
}

// TestSavepointsAreCanonical takes a savepoint of boltdb into its own storage and reads
// it as sdk/kvstream's canonical stream, as every other backend restores it; and restores
// into boltdb a savepoint written as another backend writes one (with sdk/kvstream).
func TestSavepointsAreCanonical(t *testing.T) {
	bolt := configured(t, sdk.Options{sdk.OptionDataInlineThreshold: "0"})
	a, err := bolt.CreateCheckpointStorage(ctx, "portable")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()

	t.Run("FromBoltdb", func(t *testing.T) {
		kb, want := filled(t, bolt, 3000)
		done, handles := checkpoint(t, kb, a, 1, target)
		if !strings.HasPrefix(done.ExternalPointer, filepath.Join(target, "savepoint-portab-")) {
			t.Errorf("savepoint pointer %q is not a savepoint directory under %s", done.ExternalPointer, target)
		}
		if _, err := bolt.ResolveCheckpoint(ctx, done.ExternalPointer); err != nil {
			t.Fatalf("ResolveCheckpoint(%q): %v", done.ExternalPointer, err)
		}
		if len(handles) != 1 || handles[0].Format != sdk.FormatCanonical {
			t.Fatalf("savepoint handles %+v, want one in format %q", handles, sdk.FormatCanonical)
		}
		got := map[string]string{}
		for _, f := range handles[0].Files {
			r := kvstream.NewReader(bytes.NewReader(readAll(t, a, f.Handle)))
			for {
				k, v, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("reading savepoint file %q as a canonical stream: %v", f.Name, err)
				}
				got[string(k)] = string(v)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("the savepoint holds %d keys, want %d", len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("savepoint key %q = %q, want %q", k, got[k], v)
			}
		}
	})
	t.Run("IntoBoltdb", func(t *testing.T) {
		loc, err := a.InitializeLocationForSavepoint(ctx, 2, target)
		if err != nil {
			t.Fatal(err)
		}
		out, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
		if err != nil {
			t.Fatal(err)
		}
		w := kvstream.NewWriter(out)
		want := map[string]string{}
		for i := range 2000 {
			k, v := key(i%128, fmt.Sprintf("other-%d", i)), fmt.Sprint(i)
			if err := w.Write(k, []byte(v)); err != nil {
				t.Fatal(err)
			}
			want[string(k)] = v
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		h, err := out.CloseAndGetHandle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		handles := []sdk.KeyedStateHandle{{KeyGroups: params.KeyGroups, Format: sdk.FormatCanonical, Files: []sdk.NamedStateHandle{{Name: "state.kv", Handle: h}}}}
		restoreInto(t, bolt, handles, sdktest.AccessReader(a), want)
	})
}

// TestOptions checks option errors name the option, and the storage's need for a dir.
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts   sdk.Options
		option string
	}{
		{sdk.Options{sdk.OptionDataInlineThreshold: "lots"}, sdk.OptionDataInlineThreshold},
		{sdk.Options{sdk.OptionDataInlineThreshold: "2000000"}, sdk.OptionDataInlineThreshold},
		{sdk.Options{sdk.OptionIncremental: "maybe"}, sdk.OptionIncremental},
		{sdk.Options{sdk.OptionCheckpointDir: "s3://bucket/checkpoints"}, sdk.OptionCheckpointDir},
		{sdk.Options{"block-size": "4k"}, "block-size"},
	} {
		err := boltstate.New().Configure(ctx, tc.opts)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option {
			t.Errorf("Configure(%v) = %v, want an *sdk.OptionError naming %q", tc.opts, err, tc.option)
		}
	}
	p := boltstate.New()
	if err := p.Configure(ctx, sdk.Options{sdk.OptionIncremental: "true"}); err != nil {
		t.Fatalf("Configure without a checkpoint dir (backend only): %v", err)
	}
	_, err := p.CreateCheckpointStorage(ctx, "job")
	if err == nil || !strings.Contains(err.Error(), "execution.checkpointing.dir") {
		t.Errorf("CreateCheckpointStorage without a dir = %v, want an error naming execution.checkpointing.dir", err)
	}
	if _, err := configured(t, nil).CreateCheckpointStorage(ctx, "../escape"); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("CreateCheckpointStorage(\"../escape\") = %v, want an error wrapping sdk.ErrInvalidArgument", err)
	}
}

// TestResolveForeignPaths: pointers that are not this plugin's do not resolve, with an
// error naming the pointer: sdk.ErrNotFound where nothing is, sdk.ErrInvalidArgument for a
// plain file.
func TestResolveForeignPaths(t *testing.T) {
	p := configured(t, nil)
	file := filepath.Join(t.TempDir(), "plain.txt")
	if err := os.WriteFile(file, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	for ptr, kind := range map[string]error{
		file:        sdk.ErrInvalidArgument,
		t.TempDir(): sdk.ErrNotFound,
		filepath.Join(t.TempDir(), "job", "chk-3"): sdk.ErrNotFound,
	} {
		if _, err := p.ResolveCheckpoint(ctx, ptr); !errors.Is(err, kind) || !strings.Contains(err.Error(), ptr) {
			t.Errorf("ResolveCheckpoint(%q) = %v, want an error wrapping %v naming the pointer", ptr, err, kind)
		}
	}
	if _, err := p.ResolveCheckpoint(ctx, "s3://bucket/chk-1"); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("ResolveCheckpoint(s3://...) = %v, want an error wrapping sdk.ErrUnsupported", err)
	}
}

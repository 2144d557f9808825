package host_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var allGroups = sdk.KeyGroupRange{Start: 0, End: 128}

func newKeyed(t testing.TB, p *host.Plugin, groups sdk.KeyGroupRange) sdk.KeyedStateBackend {
	t.Helper()
	b, ok := p.StateBackend()
	if !ok {
		t.Fatal("plugin serves no state backend")
	}
	kb, err := b.CreateKeyedStateBackend(ctxT(t), sdk.KeyedBackendParams{JobID: "job", OperatorID: "op", Parallelism: 1, MaxParallelism: 128, KeyGroups: groups})
	if err != nil {
		t.Fatalf("CreateKeyedStateBackend: %v", err)
	}
	return kb
}

// key returns a state key of key group g.
func key(g int, s string) []byte { return append(sdk.KeyGroupPrefix(g), s...) }

func TestGetDistinguishesAbsentFromEmpty(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	if err := kb.Write(ctx, []sdk.Mutation{{Key: key(1, "empty"), Value: nil}, {Key: key(1, "full"), Value: []byte("v")}, {Key: key(1, "gone"), Value: []byte("x")}, {Key: key(1, "gone"), Delete: true}}); err != nil {
		t.Fatal(err)
	}
	vs, err := kb.Get(ctx, [][]byte{key(1, "empty"), key(1, "absent"), key(1, "full"), key(1, "gone")})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] == nil || len(vs[0]) != 0 {
		t.Errorf("present empty value came back as %#v, want non-nil empty", vs[0])
	}
	if vs[1] != nil || vs[3] != nil {
		t.Errorf("absent values came back as %#v and %#v, want nil", vs[1], vs[3])
	}
	if string(vs[2]) != "v" {
		t.Errorf("value = %q, want v", vs[2])
	}
}

func TestGetAndWriteLargeBatches(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	const n = 100_000
	keys := make([][]byte, n)
	muts := make([]sdk.Mutation, 0, n)
	for i := range keys {
		keys[i] = key(i%128, fmt.Sprintf("k%06d", i))
		if i%3 != 0 { // every third key stays absent
			muts = append(muts, sdk.Mutation{Key: keys[i], Value: []byte(fmt.Sprintf("value-%d", i))})
		}
	}
	if err := kb.Write(ctx, muts); err != nil {
		t.Fatal(err)
	}
	vs, err := kb.Get(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != n {
		t.Fatalf("got %d values for %d keys", len(vs), n)
	}
	for i, v := range vs {
		want := fmt.Sprintf("value-%d", i)
		if i%3 == 0 && v != nil || i%3 != 0 && string(v) != want {
			t.Fatalf("value %d = %q, want %q (absent: %v)", i, v, want, i%3 == 0)
		}
	}
	// Large values: the plugin answers Get in several parts, keeping the order.
	big := make([]sdk.Mutation, 12)
	bigKeys := make([][]byte, len(big))
	for i := range big {
		bigKeys[i] = key(2, fmt.Sprintf("big%02d", i))
		big[i] = sdk.Mutation{Key: bigKeys[i], Value: bytes.Repeat([]byte{byte(i)}, 700<<10)}
	}
	if err := kb.Write(ctx, big); err != nil {
		t.Fatal(err)
	}
	vs, err = kb.Get(ctx, bigKeys)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if !bytes.Equal(v, big[i].Value) {
			t.Fatalf("big value %d: %d bytes, want %d of %d", i, len(v), len(big[i].Value), i)
		}
	}
}

func TestScanPages(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	var muts []sdk.Mutation
	for i := 0; i < 250; i++ {
		muts = append(muts, sdk.Mutation{Key: key(5, fmt.Sprintf("%04d", i)), Value: []byte{byte(i)}})
	}
	muts = append(muts, sdk.Mutation{Key: key(6, "other"), Value: []byte("o")})
	if err := kb.Write(ctx, muts); err != nil {
		t.Fatal(err)
	}
	var got []sdk.KV
	start, end := key(5, ""), sdk.KeyGroupPrefix(6)
	for {
		page, err := kb.Scan(ctx, start, end, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 100 {
			t.Fatalf("page of %d pairs, limit 100", len(page))
		}
		got = append(got, page...)
		start = append(append([]byte{}, page[len(page)-1].Key...), 0)
	}
	if len(got) != 250 {
		t.Fatalf("scanned %d pairs, want 250", len(got))
	}
	for i, kv := range got {
		if !bytes.Equal(kv.Key, key(5, fmt.Sprintf("%04d", i))) || kv.Value[0] != byte(i) {
			t.Fatalf("pair %d = %q=%v", i, kv.Key, kv.Value)
		}
	}
	all, err := kb.Scan(ctx, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 251 {
		t.Errorf("unbounded scan returned %d pairs, want 251 (nil end means no bound)", len(all))
	}
	none, err := kb.Scan(ctx, nil, []byte{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(none) != 0 {
		t.Errorf("scan below an empty end returned %d pairs, want 0", len(none))
	}
}

// readerFunc adapts a CheckpointStorageAccess to sdk.StateReader.
type readerFunc func(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error)

func (f readerFunc) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	return f(ctx, h)
}

func TestSnapshotWriteAndRestoreThroughStorage(t *testing.T) {
	p := startPlugin(t, "mem")
	storage, ok := p.CheckpointStorage()
	if !ok {
		t.Fatal("mem serves no checkpoint storage")
	}
	ctx := ctxT(t)
	kb := newKeyed(t, p, allGroups)
	// About 10 MiB of state in random values, in both halves of the key groups.
	rng := rand.New(rand.NewSource(1))
	want := map[string][]byte{}
	var muts []sdk.Mutation
	for i := 0; i < 160; i++ {
		v := make([]byte, 64<<10)
		rng.Read(v)
		k := key(i%128, fmt.Sprintf("blob%03d", i))
		want[string(k)] = v
		muts = append(muts, sdk.Mutation{Key: k, Value: v})
	}
	if err := kb.Write(ctx, muts); err != nil {
		t.Fatal(err)
	}
	snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	// Writes after Snapshot must not show in it.
	if err := kb.Write(ctx, []sdk.Mutation{{Key: key(3, "late"), Value: []byte("late")}}); err != nil {
		t.Fatal(err)
	}
	access, err := storage.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	defer access.Close()
	loc, err := access.InitializeLocationForCheckpoint(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	handles, err := snap.Write(ctx, loc)
	if err != nil {
		t.Fatalf("snapshot write: %v", err)
	}
	var total int64
	for _, h := range handles {
		if h.Format != memstore.Format || h.KeyGroups != allGroups {
			t.Errorf("handle %+v", h)
		}
		for _, f := range h.Files {
			total += f.Handle.Size
		}
	}
	if total < 10<<20 {
		t.Fatalf("snapshot holds %d bytes, want >= 10 MiB", total)
	}
	// Restore the lower half of the key groups only, from the storage.
	half := sdk.KeyGroupRange{Start: 0, End: 64}
	kb2 := newKeyed(t, p, half)
	if err := kb2.Restore(ctx, handles, readerFunc(access.OpenState)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	got := scanAll(t, kb2)
	n := 0
	for k, v := range want {
		if half.Contains(sdk.KeyGroupOf([]byte(k))) {
			n++
		}
		_ = v
	}
	if len(got) != n {
		t.Fatalf("restored %d keys, want %d", len(got), n)
	}
	for _, kv := range got {
		if !bytes.Equal(kv.Value, want[string(kv.Key)]) {
			t.Fatalf("restored value of %q differs", kv.Key)
		}
	}
	// A handle of an unknown format is refused with ErrUnsupported.
	bad := []sdk.KeyedStateHandle{{KeyGroups: allGroups, Format: "other-v9"}}
	if err := newKeyed(t, p, allGroups).Restore(ctx, bad, readerFunc(access.OpenState)); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("restore of an unknown format: %v, want ErrUnsupported", err)
	}
	// A failing reader's error reaches the plugin and comes back with its identity.
	broken := readerFunc(func(context.Context, sdk.StreamStateHandle) (io.ReadCloser, error) {
		return nil, fmt.Errorf("checksum of part-0: %w", sdk.ErrCorrupt)
	})
	if err := newKeyed(t, p, allGroups).Restore(ctx, handles, broken); !errors.Is(err, sdk.ErrCorrupt) || !strings.Contains(err.Error(), "checksum of part-0") {
		t.Errorf("restore with a broken reader: %v, want ErrCorrupt naming part-0", err)
	}
}

// failingFactory hands out streams that fail after a few bytes.
type failingFactory struct{}

func (failingFactory) CreateCheckpointStateOutputStream(context.Context, sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &failingStream{}, nil
}

type failingStream struct{ n int }

func (s *failingStream) Write(p []byte) (int, error) {
	s.n += len(p)
	if s.n > 100 {
		return 0, fmt.Errorf("disk full: %w", sdk.ErrStateTooLarge)
	}
	return len(p), nil
}

func (s *failingStream) CloseAndGetHandle(context.Context) (sdk.StreamStateHandle, error) {
	return sdk.StreamStateHandle{}, errors.New("closed after failure")
}

func (s *failingStream) Close() error { return nil }

func TestSnapshotWriteFailingStream(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	if err := kb.Write(ctx, []sdk.Mutation{{Key: key(1, "a"), Value: bytes.Repeat([]byte("a"), 3<<20)}, {Key: key(2, "b"), Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	if _, err := snap.Write(ctx, failingFactory{}); !errors.Is(err, sdk.ErrStateTooLarge) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("snapshot write into failing streams: %v, want ErrStateTooLarge with the host's text", err)
	}
	// The plugin is still fine.
	if _, err := kb.Get(ctx, [][]byte{key(2, "b")}); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsKeepIdentityAndPanicsAreErrors(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	err := kb.Write(ctx, []sdk.Mutation{{Key: memstore.TooLargeKey, Value: []byte("x")}})
	if !errors.Is(err, sdk.ErrStateTooLarge) || !strings.Contains(err.Error(), "too-large") {
		t.Errorf("Write error = %v, want ErrStateTooLarge with the plugin's text", err)
	}
	_, err = kb.Get(ctx, [][]byte{memstore.PanicKey})
	if err == nil || !strings.Contains(err.Error(), "plugin panicked: memstore: asked to panic") {
		t.Errorf("Get that panics = %v, want a plugin panicked error", err)
	}
	// The plugin survived the panic.
	if _, err := kb.Get(ctx, [][]byte{key(1, "x")}); err != nil {
		t.Errorf("Get after a panic: %v", err)
	}
	if p.Exited() {
		t.Error("plugin exited after a panic")
	}
	b, _ := p.StateBackend()
	_, err = b.CreateKeyedStateBackend(ctx, sdk.KeyedBackendParams{KeyGroups: sdk.KeyGroupRange{Start: 5, End: 5}})
	if !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("CreateKeyedStateBackend with empty key groups = %v, want ErrInvalidArgument", err)
	}
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kb.Close(); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("second Close = %v, want ErrNotFound", err)
	}
	if _, err := kb.Get(ctx, [][]byte{key(1, "x")}); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("Get on a closed backend = %v, want ErrNotFound", err)
	}
	if err := kb.NotifyCheckpointComplete(ctx, 1); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("NotifyCheckpointComplete on a closed backend = %v, want ErrNotFound", err)
	}
}

func TestConfigureOptionError(t *testing.T) {
	p := startPlugin(t, "mem")
	ctx := ctxT(t)
	if err := p.Configure(ctx, sdk.Options{"greeting": "hi", sdk.OptionDataInlineThreshold: "many"}); err == nil {
		t.Fatal("Configure accepted a bad option")
	} else {
		var oe *sdk.OptionError
		if !errors.As(err, &oe) {
			t.Fatalf("Configure error %v is no *sdk.OptionError", err)
		}
		if oe.Option != sdk.OptionDataInlineThreshold || oe.Value != "many" {
			t.Errorf("OptionError names %q=%q, want %q=many", oe.Option, oe.Value, sdk.OptionDataInlineThreshold)
		}
		if !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(oe.Error(), "not a byte count") {
			t.Errorf("OptionError %v lost its cause", oe)
		}
	}
	err := p.Configure(ctx, sdk.Options{"colour": "blue"})
	var oe *sdk.OptionError
	if !errors.As(err, &oe) || oe.Option != "colour" || oe.Value != "blue" {
		t.Errorf("unknown option: %v, want an OptionError naming colour", err)
	}
	if err := p.Configure(ctx, sdk.Options{"greeting": "hi"}); err != nil {
		t.Errorf("good options: %v", err)
	}
}

func TestNotifications(t *testing.T) {
	p := startPlugin(t, "mem")
	kb := newKeyed(t, p, allGroups)
	ctx := ctxT(t)
	if err := kb.NotifyCheckpointComplete(ctx, 3); err != nil {
		t.Error(err)
	}
	if err := kb.NotifyCheckpointAborted(ctx, 4); err != nil {
		t.Error(err)
	}
	if binary.BigEndian.Uint16(key(7, "")) != 7 {
		t.Fatal("key helper")
	}
}

// scanAll reads every pair of kb, page by page (pages stop near 1 MiB).
func scanAll(t testing.TB, kb sdk.KeyedStateBackend) []sdk.KV {
	t.Helper()
	var all []sdk.KV
	var start []byte
	for {
		page, err := kb.Scan(ctxT(t), start, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		start = append(append([]byte{}, page[len(page)-1].Key...), 0)
	}
}

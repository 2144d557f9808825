package sdktest

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestMemoryStreamsRoundTrip(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryStreams()
	s, err := m.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenStreams() != 1 {
		t.Fatalf("OpenStreams = %d, want 1", m.OpenStreams())
	}
	s.Write([]byte("hello "))
	s.Write([]byte("world"))
	h, err := s.CloseAndGetHandle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Size != 11 || h.Scope != sdk.ScopeShared || h.Checksum != Checksum([]byte("hello world")) {
		t.Fatalf("handle = %+v", h)
	}
	if err := s.Close(); err != nil || m.OpenStreams() != 0 {
		t.Fatalf("Close after handle: %v, open streams %d", err, m.OpenStreams())
	}
	rc, err := m.Open(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil || string(b) != "hello world" {
		t.Fatalf("read %q, %v", b, err)
	}
	if got := m.Scopes(); len(got) != 1 || got[0] != sdk.ScopeShared {
		t.Fatalf("Scopes = %v", got)
	}
}

func TestMemoryStreamsCloseDiscards(t *testing.T) {
	m := NewMemoryStreams()
	s, _ := m.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeExclusive)
	s.Write([]byte("dropped"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Len() != 0 || m.OpenStreams() != 0 {
		t.Fatalf("after Close: %d stored, %d open", m.Len(), m.OpenStreams())
	}
	if _, err := s.CloseAndGetHandle(context.Background()); err == nil {
		t.Fatal("CloseAndGetHandle after Close succeeded")
	}
}

func TestMemoryStreamsVerify(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryStreams()
	h := m.Put(sdk.ScopeExclusive, []byte("payload"))
	bad := map[string]sdk.StreamStateHandle{}
	badSum := h
	badSum.Checksum ^= 1
	bad["checksum"] = badSum
	short := h
	short.Size--
	bad["size too small"] = short
	long := h
	long.Size++
	bad["size too large"] = long
	for name, b := range bad {
		rc, err := m.Open(ctx, b)
		if err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		if _, err := io.ReadAll(rc); !errors.Is(err, sdk.ErrCorrupt) {
			t.Errorf("%s: read error %v, want ErrCorrupt", name, err)
		}
	}
	noSum := h
	noSum.Checksum = 0
	rc, _ := m.Open(ctx, noSum)
	if _, err := io.ReadAll(rc); err != nil {
		t.Errorf("handle without checksum: %v", err)
	}
	m.Delete(h)
	if _, err := m.Open(ctx, h); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("Open of deleted handle: %v, want ErrNotFound", err)
	}
	inline := sdk.StreamStateHandle{Inline: []byte("in"), Size: 2, Checksum: Checksum([]byte("in"))}
	rc, err := m.Open(ctx, inline)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rc); err != nil || string(b) != "in" {
		t.Errorf("inline handle read %q, %v", b, err)
	}
}

// locatingAccess is an access that locates local state (its other methods are not called).
type locatingAccess struct {
	sdk.CheckpointStorageAccess
}

func (locatingAccess) LocalStatePath(context.Context, sdk.StreamStateHandle) (string, error) {
	return "/state/file", nil
}

// TestAccessReaderKeepsTheLocator: the reader over an access that locates local state
// locates it too, with the access's answers; over one that does not, it does not.
func TestAccessReaderKeepsTheLocator(t *testing.T) {
	l, ok := AccessReader(locatingAccess{}).(sdk.LocalStateLocator)
	if !ok {
		t.Fatal("the reader over a locating access is no sdk.LocalStateLocator")
	}
	if p, err := l.LocalStatePath(context.Background(), sdk.StreamStateHandle{Ref: "x"}); p != "/state/file" || err != nil {
		t.Fatalf("LocalStatePath = %q, %v; want the access's answer", p, err)
	}
	if _, ok := AccessReader(struct{ sdk.CheckpointStorageAccess }{}).(sdk.LocalStateLocator); ok {
		t.Fatal("the reader over an access that locates nothing is an sdk.LocalStateLocator")
	}
}

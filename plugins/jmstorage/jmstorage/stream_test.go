package jmstorage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestRoundTrip8MiB(t *testing.T) {
	s := configured(t, sdk.Options{OptionMaxStateSize: "16mb"})
	a := job(t, s, "j")
	loc := chkLocation(t, a, 1)
	big := pattern(8<<20, 1)
	for _, tc := range []struct {
		scope   sdk.Scope
		segment string
		chunk   int
	}{{sdk.ScopeExclusive, "/chk-1/", 1000}, {sdk.ScopeShared, "/shared/", 333}} {
		h := mustWrite(t, loc, tc.scope, big, tc.chunk)
		if !strings.HasPrefix(h.Ref, "jm:j"+tc.segment) || h.Inline != nil {
			t.Fatalf("%v handle ref %q, want jm:j%s...", tc.scope, h.Ref, tc.segment)
		}
		checkRead(t, a, h, big)
		checkRead(t, job(t, s, "other"), h, big)
	}
}

func TestInlineThreshold(t *testing.T) {
	s := configured(t, sdk.Options{sdk.OptionDataInlineThreshold: "1kb"})
	a := job(t, s, "j")
	loc := chkLocation(t, a, 1)
	if h := mustWrite(t, loc, sdk.ScopeExclusive, pattern(1023, 1), 10); h.Ref != "" || len(h.Inline) != 1023 {
		t.Fatalf("1023 bytes: want inline, got %q", h.Ref)
	}
	if h := mustWrite(t, loc, sdk.ScopeExclusive, pattern(1024, 1), 10); h.Ref == "" {
		t.Fatalf("1024 bytes: want a blob, got inline")
	}
	if n, _, _ := s.memoryStats(); n != 1 {
		t.Fatalf("blobs held: %d, want 1 (inline state holds none)", n)
	}
	d := configured(t, nil)
	loc = chkLocation(t, job(t, d, "j"), 1)
	if h := mustWrite(t, loc, sdk.ScopeShared, pattern(20<<10-1, 1), 100); h.Ref != "" {
		t.Fatalf("default threshold: 20 KiB - 1 not inline")
	}
	if h := mustWrite(t, loc, sdk.ScopeShared, pattern(20<<10, 1), 100); h.Ref == "" {
		t.Fatalf("default threshold: 20 KiB inline")
	}
}

func TestStateSizeLimit(t *testing.T) {
	s := configured(t, nil)
	loc := chkLocation(t, job(t, s, "j"), 1)
	// Exactly the limit is fine.
	if _, err := write(loc, sdk.ScopeExclusive, pattern(5242880, 1), 1<<16); err != nil {
		t.Fatalf("5 MiB exactly: %v", err)
	}
	out, err := loc.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	chunk := pattern(1<<16, 2)
	var werr error
	writes := 0
	for ; writes < 128 && werr == nil; writes++ {
		_, werr = out.Write(chunk)
	}
	want := "Size of the state is larger than the maximum permitted memory-backed state. Size=5308416, maxSize=5242880. " +
		"Consider using a different checkpoint storage, like fsstorage (FileSystemCheckpointStorage)."
	if !errors.Is(werr, sdk.ErrStateTooLarge) || !strings.Contains(werr.Error(), want) {
		t.Fatalf("writing 8 MiB: got %v, want ErrStateTooLarge with %q", werr, want)
	}
	if writes != 81 {
		t.Fatalf("failed at write %d, want 81 (as soon as 5 MiB is exceeded)", writes)
	}
	if _, err := out.CloseAndGetHandle(context.Background()); !errors.Is(err, sdk.ErrStateTooLarge) {
		t.Fatalf("CloseAndGetHandle after the limit: %v", err)
	}
	// A configured limit; shared streams too.
	small := configured(t, sdk.Options{OptionMaxStateSize: "1kb"})
	_, err = write(chkLocation(t, job(t, small, "j"), 1), sdk.ScopeShared, pattern(1500, 3), 1500)
	if !errors.Is(err, sdk.ErrStateTooLarge) || !strings.Contains(err.Error(), "Size=1500, maxSize=1024.") {
		t.Fatalf("1500 bytes over 1kb: %v", err)
	}
}

func TestCloseWithoutHandleDropsState(t *testing.T) {
	s := configured(t, nil)
	loc := chkLocation(t, job(t, s, "j"), 1)
	out, err := loc.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(pattern(1<<20, 1))
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("x")); err == nil {
		t.Fatalf("Write after Close succeeded")
	}
	if _, err := out.CloseAndGetHandle(context.Background()); err == nil {
		t.Fatalf("CloseAndGetHandle after Close succeeded")
	}
	if n, b, _ := s.memoryStats(); n != 0 || b != 0 {
		t.Fatalf("closed stream left %d blobs, %d bytes", n, b)
	}
}

func TestRefsAreDistinctAndForeignRefsRefused(t *testing.T) {
	s := configured(t, nil)
	a := job(t, s, "j")
	loc := chkLocation(t, a, 1)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		h := mustWrite(t, loc, sdk.Scope(i%2), pattern(30000, byte(i)), 30000)
		if seen[h.Ref] {
			t.Fatalf("ref %q handed out twice", h.Ref)
		}
		seen[h.Ref] = true
	}
	for _, ref := range []string{"file:///etc/passwd", "/etc/passwd", "jm:../x/chk-1/1", "jm:j/../../etc/1", "jm:j/chk-1", "s3://b/k"} {
		if _, err := a.OpenState(context.Background(), sdk.StreamStateHandle{Ref: ref}); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("OpenState(%q): got %v, want ErrInvalidArgument", ref, err)
		}
		if err := a.DiscardState(context.Background(), []sdk.StreamStateHandle{{Ref: ref}}); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("DiscardState(%q): got %v, want ErrInvalidArgument", ref, err)
		}
	}
	missing := fmt.Sprintf("jm:j/shared/%s-999999", s.epoch)
	if _, err := a.OpenState(context.Background(), sdk.StreamStateHandle{Ref: missing}); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("OpenState of an unknown ref: %v", err)
	}
}

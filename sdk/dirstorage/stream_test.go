package dirstorage

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestStateRoundTripExclusiveAndShared(t *testing.T) {
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job1")
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	big := pattern(8<<20, 3)
	for _, tc := range []struct {
		scope   sdk.Scope
		wantDir string
		chunk   int
	}{
		{sdk.ScopeExclusive, filepath.Join(dir, "job1", "chk-7"), 1000},
		{sdk.ScopeShared, filepath.Join(dir, "job1", "shared"), 333},
		{sdk.ScopeExclusive, filepath.Join(dir, "job1", "chk-7"), 3 << 20},
	} {
		h := writeState(t, loc, tc.scope, big, tc.chunk)
		if h.Size != int64(len(big)) || h.Scope != tc.scope || h.Inline != nil {
			t.Fatalf("handle %+v: want size %d scope %v and no inline bytes", h, len(big), tc.scope)
		}
		u, err := url.Parse(h.Ref)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
			t.Fatalf("ref %q is not an absolute file URI", h.Ref)
		}
		if filepath.Dir(u.Path) != tc.wantDir {
			t.Fatalf("ref %q: want a file in %s", h.Ref, tc.wantDir)
		}
		assertSame(t, "read back "+tc.scope.String(), readState(t, a, h), big)
	}
	// Another job's access reads them too.
	b := newJob(t, s, "job2")
	h := writeState(t, loc, sdk.ScopeExclusive, big[:1<<20], 4096)
	assertSame(t, "read by another job", readState(t, b, h), big[:1<<20])
}

func TestInlineThresholdBoundary(t *testing.T) {
	s, dir := newConfigured(t, sdk.Options{sdk.OptionDataInlineThreshold: "1kb", OptionWriteBufferSize: "100"})
	a := newJob(t, s, "j")
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(dir, "j", "chk-1")
	below := writeState(t, loc, sdk.ScopeExclusive, pattern(1023, 1), 10)
	if below.Ref != "" || len(below.Inline) != 1023 || below.Size != 1023 {
		t.Fatalf("1023 bytes with threshold 1024: want inline, got ref %q inline %d", below.Ref, len(below.Inline))
	}
	assertSame(t, "inline read", readState(t, a, below), pattern(1023, 1))
	if files := filesUnder(t, chk); len(files) != 0 {
		t.Fatalf("inline state left files: %v", files)
	}
	at := writeState(t, loc, sdk.ScopeExclusive, pattern(1024, 2), 10)
	if at.Ref == "" || at.Inline != nil || at.Size != 1024 {
		t.Fatalf("1024 bytes with threshold 1024: want a file, got %+v", at)
	}
	assertSame(t, "file read", readState(t, a, at), pattern(1024, 2))
	empty := writeState(t, loc, sdk.ScopeShared, nil, 1)
	if empty.Ref != "" || empty.Size != 0 {
		t.Fatalf("empty stream: want inline, got %+v", empty)
	}
	if files := filesUnder(t, filepath.Join(dir, "j", "shared")); len(files) != 0 {
		t.Fatalf("empty shared stream left files: %v", files)
	}

	// Threshold 0: everything goes to a file.
	s0, _ := newConfigured(t, sdk.Options{sdk.OptionDataInlineThreshold: "0"})
	loc0, err := newJob(t, s0, "j").InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if h := writeState(t, loc0, sdk.ScopeExclusive, []byte("x"), 1); h.Ref == "" {
		t.Fatalf("threshold 0: want a file for 1 byte, got inline")
	}
}

func TestDefaultInlineThresholdIs20KiB(t *testing.T) {
	s, _ := newConfigured(t, nil)
	loc, err := newJob(t, s, "j").InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if h := writeState(t, loc, sdk.ScopeExclusive, pattern(20<<10-1, 0), 512); h.Ref != "" {
		t.Fatalf("20 KiB - 1: want inline, got %q", h.Ref)
	}
	if h := writeState(t, loc, sdk.ScopeExclusive, pattern(20<<10, 0), 512); h.Ref == "" {
		t.Fatalf("20 KiB: want a file, got inline")
	}
}

func TestCloseWithoutHandleDeletesFile(t *testing.T) {
	s, dir := newConfigured(t, sdk.Options{sdk.OptionDataInlineThreshold: "1kb"})
	a := newJob(t, s, "j")
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []sdk.Scope{sdk.ScopeExclusive, sdk.ScopeShared} {
		out, err := loc.CreateCheckpointStateOutputStream(context.Background(), scope)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Write(pattern(1<<20, 9)); err != nil {
			t.Fatal(err)
		}
		if len(filesUnder(t, filepath.Join(dir, "j"))) == 0 {
			t.Fatalf("%v: a 1 MiB write should have created a file", scope)
		}
		if err := out.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if files := filesUnder(t, filepath.Join(dir, "j")); len(files) != 0 {
			t.Fatalf("%v: Close left %v", scope, files)
		}
		if _, err := out.Write([]byte("x")); err == nil {
			t.Fatalf("Write after Close succeeded")
		}
		if _, err := out.CloseAndGetHandle(context.Background()); err == nil {
			t.Fatalf("CloseAndGetHandle after Close succeeded")
		}
	}
}

func TestFullDiskSurfacesAndRemovesPartialFile(t *testing.T) {
	s, dir := newConfigured(t, sdk.Options{OptionWriteBufferSize: "4kb"})
	s.fs = &faultFS{failAfter: 100 << 10}
	a := newJob(t, s, "j")
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := loc.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		_, werr = out.Write(pattern(4000, byte(i)))
	}
	if !errors.Is(werr, syscall.ENOSPC) || !strings.Contains(werr.Error(), filepath.Join(dir, "j", "chk-1")) {
		t.Fatalf("Write on a full disk: got %v, want ENOSPC naming the file", werr)
	}
	if files := filesUnder(t, filepath.Join(dir, "j")); len(files) != 0 {
		t.Fatalf("partial file left: %v", files)
	}
	if _, err := out.CloseAndGetHandle(context.Background()); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("CloseAndGetHandle after failure: got %v, want the write error", err)
	}

	// Failure while flushing the last buffer at CloseAndGetHandle.
	// The buffer holds 20 KiB (the inline threshold): the first flush (20000 bytes) fits,
	// the last one (5000 bytes, at CloseAndGetHandle) does not.
	innerLocation(loc).s.fs = &faultFS{failAfter: 22000}
	out, err = loc.CreateCheckpointStateOutputStream(context.Background(), sdk.ScopeShared)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := out.Write(pattern(2500, byte(i))); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if _, err := out.CloseAndGetHandle(context.Background()); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("CloseAndGetHandle on a full disk: got %v", err)
	}
	if files := filesUnder(t, filepath.Join(dir, "j")); len(files) != 0 {
		t.Fatalf("partial file left: %v", files)
	}
}

func TestUnknownScopeRefused(t *testing.T) {
	s, _ := newConfigured(t, nil)
	loc, err := newJob(t, s, "j").InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loc.CreateCheckpointStateOutputStream(context.Background(), sdk.Scope(7)); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Fatalf("scope 7: got %v, want ErrInvalidArgument", err)
	}
}

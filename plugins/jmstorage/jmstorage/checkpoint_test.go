package jmstorage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

func TestMemoryOnlyCheckpoints(t *testing.T) {
	ctx := context.Background()
	s := configured(t, nil)
	a := job(t, s, "wc")
	if a.SupportsHighlyAvailableStorage() || a.HasDefaultSavepointLocation() {
		t.Fatalf("memory-only storage claims HA or a savepoint location")
	}
	loc := chkLocation(t, a, 3)
	if loc.LocationReference() != "jm:wc/chk-3" {
		t.Fatalf("LocationReference %q", loc.LocationReference())
	}
	h := mustWrite(t, loc, sdk.ScopeExclusive, pattern(100000, 1), 4096)
	c := finalize(t, loc, []byte("md3"))
	if c.ExternalPointer != "jm:wc/chk-3" || c.CheckpointID != 3 || c.Time.IsZero() {
		t.Fatalf("completed %+v", c)
	}
	r, err := s.ResolveCheckpoint(ctx, "jm:wc/chk-3")
	if err != nil || string(read(t, a, r.Metadata)) != "md3" {
		t.Fatalf("resolve: %+v %v", r, err)
	}
	checkRead(t, a, h, pattern(100000, 1))
	// A new process knows nothing of it: that is the point of memory-only storage.
	_, err = configured(t, nil).ResolveCheckpoint(ctx, "jm:wc/chk-3")
	if !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), "jm:wc/chk-3") {
		t.Fatalf("resolve in a fresh process: %v", err)
	}
}

func TestFinalizeTwiceFails(t *testing.T) {
	for _, opts := range []sdk.Options{nil, {sdk.OptionCheckpointDir: t.TempDir()}} {
		ctx := context.Background()
		s := configured(t, opts)
		a := job(t, s, "j")
		loc := chkLocation(t, a, 1)
		m1, _ := loc.CreateMetadataOutputStream(ctx)
		m2, _ := loc.CreateMetadataOutputStream(ctx)
		m1.Write([]byte("first"))
		m2.Write([]byte("second"))
		c, err := m1.CloseAndFinalize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m1.CloseAndFinalize(ctx); err == nil {
			t.Fatalf("second CloseAndFinalize of one stream succeeded")
		}
		if _, err := m2.CloseAndFinalize(ctx); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("finalize over existing metadata (%v): %v", opts, err)
		}
		if _, err := a.InitializeLocationForCheckpoint(ctx, 1); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("InitializeLocationForCheckpoint of a complete checkpoint: %v", err)
		}
		r, err := s.ResolveCheckpoint(ctx, c.ExternalPointer)
		if err != nil || string(read(t, a, r.Metadata)) != "first" {
			t.Fatalf("metadata after a refused second finalize: %v", err)
		}
	}
}

func TestListDisposeAndBoundedMemory(t *testing.T) {
	for _, opts := range []sdk.Options{nil, {sdk.OptionCheckpointDir: t.TempDir()}} {
		ctx := context.Background()
		s := configured(t, opts)
		a := job(t, s, "j")
		var kept []sdk.CompletedCheckpointStorageLocation
		var shared []sdk.StreamStateHandle
		// 60 checkpoints retaining 2, each with 64 KiB exclusive and 64 KiB shared state;
		// the runner discards shared state two checkpoints later.
		for id := int64(1); id <= 60; id++ {
			loc := chkLocation(t, a, id)
			mustWrite(t, loc, sdk.ScopeExclusive, pattern(64<<10, byte(id)), 8192)
			shared = append(shared, mustWrite(t, loc, sdk.ScopeShared, pattern(64<<10, byte(id+100)), 8192))
			kept = append(kept, finalize(t, loc, []byte{byte(id)}))
			if len(kept) > 2 {
				if err := a.DisposeCheckpoint(ctx, kept[0]); err != nil {
					t.Fatal(err)
				}
				if err := a.DiscardState(ctx, shared[:1]); err != nil {
					t.Fatal(err)
				}
				kept, shared = kept[1:], shared[1:]
			}
		}
		blobs, bytes, cps := s.memoryStats()
		if blobs != 4 || cps != 2 || bytes != 4*64<<10 {
			t.Fatalf("%v: after 60 checkpoints holding %d blobs, %d bytes, %d checkpoints; want 4, %d, 2", opts, blobs, bytes, cps, 4*64<<10)
		}
		list, err := a.ListCompletedCheckpoints(ctx)
		if err != nil || len(list) != 2 || list[0].CheckpointID != 59 || list[1].CheckpointID != 60 {
			t.Fatalf("list %+v %v", list, err)
		}
		if _, err := s.ResolveCheckpoint(ctx, kept[0].ExternalPointer); err != nil {
			t.Fatal(err)
		}
		if err := a.DisposeCheckpoint(ctx, kept[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ResolveCheckpoint(ctx, kept[0].ExternalPointer); !errors.Is(err, sdk.ErrNotFound) {
			t.Fatalf("resolve after dispose: %v", err)
		}
		if err := a.DisposeCheckpoint(ctx, kept[0]); err != nil {
			t.Fatalf("dispose twice: %v", err)
		}
	}
}

func TestListOrdering(t *testing.T) {
	for _, opts := range []sdk.Options{nil, {sdk.OptionCheckpointDir: t.TempDir()}} {
		s := configured(t, opts)
		a := job(t, s, "j")
		for _, id := range []int64{10, 2, 100, 1} {
			finalize(t, chkLocation(t, a, id), []byte{byte(id)})
		}
		chkLocation(t, a, 200) // pending, not listed
		sp, err := a.InitializeLocationForSavepoint(context.Background(), 300, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		finalize(t, sp, []byte("sp"))
		finalize(t, chkLocation(t, job(t, s, "other"), 5), []byte("x"))
		list, err := a.ListCompletedCheckpoints(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, c := range list {
			ids = append(ids, c.CheckpointID)
		}
		if len(ids) != 4 || ids[0] != 1 || ids[1] != 2 || ids[2] != 10 || ids[3] != 100 {
			t.Fatalf("%v: listed %v, want [1 2 10 100]", opts, ids)
		}
	}
}

func TestReinitializeDropsIncompleteCheckpoints(t *testing.T) {
	dir := t.TempDir()
	s := configured(t, sdk.Options{sdk.OptionCheckpointDir: dir})
	a := job(t, s, "j")
	loc := chkLocation(t, a, 1)
	h := mustWrite(t, loc, sdk.ScopeExclusive, pattern(1<<20, 1), 1<<16)
	// A crash before publish on disk: a chk-N directory with only a temporary file.
	leftover := filepath.Join(dir, "j", "chk-7")
	os.MkdirAll(leftover, 0o755)
	os.WriteFile(filepath.Join(leftover, layout.MetadataTempPrefix+"x"), []byte("half"), 0o644)
	_, err := s.ResolveCheckpoint(context.Background(), leftover)
	want := "Cannot find meta data file '_metadata' in directory '" + leftover + "'"
	if !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), want) {
		t.Fatalf("resolve leftover: %v", err)
	}
	job(t, s, "j") // the job restarts
	if _, err := a.OpenState(context.Background(), h); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("state of an abandoned checkpoint still readable: %v", err)
	}
	if n, _, _ := s.memoryStats(); n != 0 {
		t.Fatalf("%d blobs held after reinitialization", n)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("leftover chk-7 survived: %v", err)
	}
	if _, err := loc.CreateMetadataOutputStream(context.Background()); err == nil {
		t.Fatalf("an abandoned location still accepts metadata")
	}
}

func TestRestartWithDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ckpt")
	opts := sdk.Options{sdk.OptionCheckpointDir: "file://" + dir, OptionMaxStateSize: "16mb"}
	s := configured(t, opts)
	a := job(t, s, "wc")
	if !a.SupportsHighlyAvailableStorage() {
		t.Fatalf("with a dir the storage should be highly available")
	}
	loc1 := chkLocation(t, a, 1)
	shared1 := mustWrite(t, loc1, sdk.ScopeShared, pattern(3<<20, 1), 1<<16)
	ex1 := mustWrite(t, loc1, sdk.ScopeExclusive, pattern(8<<20, 2), 1000)
	c1 := finalize(t, loc1, []byte("checkpoint one"))
	loc2 := chkLocation(t, a, 2)
	ex2 := mustWrite(t, loc2, sdk.ScopeExclusive, pattern(50000, 3), 1000)
	inline := mustWrite(t, loc2, sdk.ScopeExclusive, []byte("tiny"), 4)
	c2 := finalize(t, loc2, []byte("checkpoint two")) // references shared1 too
	if c2.ExternalPointer != filepath.Join(dir, "wc", "chk-2") {
		t.Fatalf("pointer %q, want the chk-2 directory", c2.ExternalPointer)
	}
	if fi, err := os.Stat(filepath.Join(dir, "wc", "chk-2", "_metadata")); err != nil || fi.Size() < 3<<20 {
		t.Fatalf("chk-2/_metadata should carry the shared blob: %v %v", fi, err)
	}

	// "Restart": a new Storage reading the same dir.
	r := configured(t, opts)
	b := job(t, r, "wc")
	list, err := b.ListCompletedCheckpoints(ctx)
	if err != nil || len(list) != 2 || list[0].ExternalPointer != c1.ExternalPointer || list[1].CheckpointID != 2 {
		t.Fatalf("list after restart: %+v %v", list, err)
	}
	if !list[1].Time.Equal(c2.Time) {
		t.Fatalf("time %v after restart, %v before", list[1].Time, c2.Time)
	}
	for _, p := range []string{c2.ExternalPointer, filepath.Join(c2.ExternalPointer, "_metadata"), "file://" + c2.ExternalPointer} {
		got, err := r.ResolveCheckpoint(ctx, p)
		if err != nil || got.CheckpointID != 2 || string(read(t, b, got.Metadata)) != "checkpoint two" {
			t.Fatalf("resolve %q after restart: %+v %v", p, got, err)
		}
	}
	checkRead(t, b, ex1, pattern(8<<20, 2))
	checkRead(t, b, ex2, pattern(50000, 3))
	checkRead(t, b, shared1, pattern(3<<20, 1))
	checkRead(t, b, inline, []byte("tiny"))

	// A third process, where only chk-2 survives, still serves the shared blob of chk-1.
	if err := b.DisposeCheckpoint(ctx, list[0]); err != nil {
		t.Fatal(err)
	}
	third := configured(t, opts)
	c := job(t, third, "wc")
	checkRead(t, c, shared1, pattern(3<<20, 1))
	if _, err := c.OpenState(ctx, ex1); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("exclusive state of disposed chk-1: %v", err)
	}
	// New refs do not collide with the earlier processes' refs.
	h := mustWrite(t, chkLocation(t, c, 3), sdk.ScopeShared, pattern(30000, 9), 30000)
	if h.Ref == shared1.Ref {
		t.Fatalf("ref %q reused after restart", h.Ref)
	}
}

func TestCorruptCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	s := configured(t, sdk.Options{sdk.OptionCheckpointDir: dir})
	c := finalize(t, chkLocation(t, job(t, s, "j"), 1), []byte("md"))
	meta := filepath.Join(c.ExternalPointer, "_metadata")
	b, _ := os.ReadFile(meta)
	b[len(b)/2] ^= 0xff
	os.WriteFile(meta, b, 0o644)
	_, err := configured(t, sdk.Options{sdk.OptionCheckpointDir: dir}).ResolveCheckpoint(context.Background(), c.ExternalPointer)
	if !errors.Is(err, sdk.ErrCorrupt) || !strings.Contains(err.Error(), meta) {
		t.Fatalf("corrupt file: %v", err)
	}
}

func TestSavepoints(t *testing.T) {
	ctx := context.Background()
	s := configured(t, nil)
	a := job(t, s, "wordcount")
	_, err := a.InitializeLocationForSavepoint(ctx, 1, "")
	if !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(err.Error(), "No savepoint location given and no default location configured.") {
		t.Fatalf("no savepoint location: %v", err)
	}
	spDir := filepath.Join(t.TempDir(), "sp")
	d := configured(t, sdk.Options{sdk.OptionSavepointDir: spDir})
	b := job(t, d, "wordcount")
	if !b.HasDefaultSavepointLocation() {
		t.Fatalf("HasDefaultSavepointLocation false with savepoint-dir")
	}
	loc, err := b.InitializeLocationForSavepoint(ctx, 7, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := loc.LocationReference()
	if filepath.Dir(ref) != spDir || !regexp.MustCompile(`^savepoint-wordco-[0-9a-f]{12}$`).MatchString(filepath.Base(ref)) {
		t.Fatalf("savepoint location %q", ref)
	}
	ex := mustWrite(t, loc, sdk.ScopeExclusive, pattern(1<<20, 1), 1<<16)
	sh := mustWrite(t, loc, sdk.ScopeShared, pattern(1<<20, 2), 1<<16)
	c := finalize(t, loc, []byte("savepoint"))
	if c.ExternalPointer != ref || c.CheckpointID != 7 {
		t.Fatalf("completed savepoint %+v", c)
	}
	// Self-contained: a fresh process reads everything from the savepoint directory alone.
	fresh := configured(t, nil)
	got, err := fresh.ResolveCheckpoint(ctx, filepath.Join(ref, "_metadata"))
	if err != nil || got.CheckpointID != 7 {
		t.Fatalf("resolve savepoint in a fresh process: %+v %v", got, err)
	}
	f := job(t, fresh, "another-job")
	checkRead(t, f, got.Metadata, []byte("savepoint"))
	checkRead(t, f, ex, pattern(1<<20, 1))
	checkRead(t, f, sh, pattern(1<<20, 2))
	if list, _ := f.ListCompletedCheckpoints(ctx); len(list) != 0 {
		t.Fatalf("savepoint listed as a checkpoint")
	}
	if err := f.DisposeCheckpoint(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ref); !os.IsNotExist(err) {
		t.Fatalf("savepoint dir survived dispose: %v", err)
	}
}

func TestDisposeOnFailure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := configured(t, sdk.Options{sdk.OptionCheckpointDir: dir})
	a := job(t, s, "j")
	loc := chkLocation(t, a, 1)
	ex := mustWrite(t, loc, sdk.ScopeExclusive, pattern(1<<20, 1), 1<<16)
	sh := mustWrite(t, loc, sdk.ScopeShared, pattern(1<<20, 2), 1<<16)
	if err := loc.DisposeOnFailure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.OpenState(ctx, ex); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("exclusive state after DisposeOnFailure: %v", err)
	}
	checkRead(t, a, sh, pattern(1<<20, 2))
	if _, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive); err == nil {
		t.Fatalf("disposed location accepts streams")
	}
}

func TestJobIDsAndPointersRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := configured(t, sdk.Options{sdk.OptionCheckpointDir: dir})
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, "a..b"} {
		if _, err := s.CreateCheckpointStorage(ctx, id); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("job id %q: %v", id, err)
		}
	}
	a := job(t, s, "j")
	plain := filepath.Join(dir, "plain.txt")
	os.WriteFile(plain, []byte("x"), 0o644)
	for _, tc := range []struct {
		pointer string
		kind    error
	}{
		{"", sdk.ErrInvalidArgument},
		{plain, sdk.ErrInvalidArgument},
		{filepath.Join(dir, "nope"), sdk.ErrNotFound},
		{"s3://b/chk-1", sdk.ErrUnsupported},
		{"jm:j/chk-9", sdk.ErrNotFound},
	} {
		if _, err := s.ResolveCheckpoint(ctx, tc.pointer); !errors.Is(err, tc.kind) || (tc.pointer != "" && !strings.Contains(err.Error(), tc.pointer)) {
			t.Errorf("ResolveCheckpoint(%q): %v, want %v naming it", tc.pointer, err, tc.kind)
		}
	}
	if err := a.DisposeCheckpoint(ctx, sdk.CompletedCheckpointStorageLocation{ExternalPointer: dir}); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Fatalf("dispose of a non-checkpoint directory: %v", err)
	}
	if _, err := os.Stat(plain); err != nil {
		t.Fatalf("dispose removed files: %v", err)
	}
}

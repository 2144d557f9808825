package dirstorage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

func TestFinalizePublishesMetadataAndResolves(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	md := []byte("runner metadata v1")
	c, h := completeCheckpoint(t, a, 3, md)
	chk := filepath.Join(dir, "job", "chk-3")
	if c.ExternalPointer != chk || c.CheckpointID != 3 || c.Time.IsZero() {
		t.Fatalf("completed location %+v: want pointer %s, id 3, a time", c, chk)
	}
	assertSame(t, "metadata", readState(t, a, c.Metadata), md)
	if got := filesUnder(t, chk); len(got) != 2 {
		t.Fatalf("chk-3 holds %v, want _metadata and one state file (no temporary file)", got)
	}
	for _, pointer := range []string{chk, chk + "/", "file://" + chk, filepath.Join(chk, "_metadata"), "file://" + filepath.Join(chk, "_metadata")} {
		r, err := s.ResolveCheckpoint(ctx, pointer)
		if err != nil {
			t.Fatalf("ResolveCheckpoint(%q): %v", pointer, err)
		}
		if r.ExternalPointer != c.ExternalPointer || r.CheckpointID != 3 || !r.Time.Equal(c.Time) || r.Metadata.Ref != c.Metadata.Ref || r.Metadata.Size != c.Metadata.Size {
			t.Fatalf("ResolveCheckpoint(%q) = %+v, want %+v", pointer, r, c)
		}
	}
	assertSame(t, "state after resolve", readState(t, a, h), pattern(64<<10, 3))
}

func TestFinalizeTwiceFails(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m1.Write([]byte("first"))
	m2.Write([]byte("second, longer"))
	if _, err := m1.CloseAndFinalize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m1.CloseAndFinalize(ctx); err == nil {
		t.Fatalf("second CloseAndFinalize on the same stream succeeded")
	}
	_, err = m2.CloseAndFinalize(ctx)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), filepath.Join(dir, "job", "chk-1", "_metadata")) {
		t.Fatalf("finalize over existing metadata: got %v, want ErrExist naming the file", err)
	}
	c, err := s.ResolveCheckpoint(ctx, filepath.Join(dir, "job", "chk-1"))
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "metadata kept", readState(t, a, c.Metadata), []byte("first"))
	if _, err := loc.CreateMetadataOutputStream(ctx); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateMetadataOutputStream on a complete checkpoint: got %v", err)
	}
	if _, err := a.InitializeLocationForCheckpoint(ctx, 1); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("InitializeLocationForCheckpoint of a complete checkpoint: got %v", err)
	}
	if files := filesUnder(t, filepath.Join(dir, "job", "chk-1")); len(files) != 1 {
		t.Fatalf("temporary files left: %v", files)
	}
}

func TestCrashBeforePublishLeavesNothingResolvable(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	completeCheckpoint(t, a, 1, []byte("one"))
	// Checkpoint 2 "crashes": state and a half-written temporary metadata file, no publish.
	loc, err := a.InitializeLocationForCheckpoint(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	writeState(t, loc, sdk.ScopeExclusive, pattern(100<<10, 1), 8192)
	m, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Write([]byte("half"))
	chk2 := filepath.Join(dir, "job", "chk-2")
	_, err = s.ResolveCheckpoint(ctx, chk2)
	want := "Cannot find meta data file '_metadata' in directory '" + chk2 + "'"
	if !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), want) {
		t.Fatalf("resolve incomplete checkpoint: got %v, want ErrNotFound with %q", err, want)
	}
	if _, err := s.ResolveCheckpoint(ctx, filepath.Join(chk2, "_metadata")); !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), want) {
		t.Fatalf("resolve missing _metadata file: got %v", err)
	}
	list, err := a.ListCompletedCheckpoints(ctx)
	if err != nil || len(list) != 1 || list[0].CheckpointID != 1 {
		t.Fatalf("ListCompletedCheckpoints = %+v, %v; want only checkpoint 1", list, err)
	}
	// A metadata stream closed without finalizing removes its temporary file.
	m.Close()
	for _, f := range filesUnder(t, chk2) {
		if strings.HasPrefix(f, "_metadata") {
			t.Fatalf("Close left %s", f)
		}
	}
}

func TestLeftoversCleanedOnInitialize(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	completeCheckpoint(t, a, 1, []byte("one"))
	jobDir := filepath.Join(dir, "job")
	// Leftovers: chk-2 without metadata (state + temp file), a temp file next to a
	// published _metadata, and unrelated entries that must stay.
	mustWrite(t, filepath.Join(jobDir, "chk-2", "abc"), "state")
	mustWrite(t, filepath.Join(jobDir, "chk-2", layout.MetadataTempPrefix+"x"), "half")
	mustWrite(t, filepath.Join(jobDir, "chk-1", layout.MetadataTempPrefix+"y"), "dup")
	mustWrite(t, filepath.Join(jobDir, "shared", "keep"), "shared")
	mustWrite(t, filepath.Join(jobDir, "notes.txt"), "mine")
	if err := os.MkdirAll(filepath.Join(jobDir, "chk-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := newJob(t, s, "job") // a restarted job initializes again
	if _, err := os.Stat(filepath.Join(jobDir, "chk-2")); !os.IsNotExist(err) {
		t.Fatalf("chk-2 without metadata survived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(jobDir, "chk-1", layout.MetadataTempPrefix+"y")); !os.IsNotExist(err) {
		t.Fatalf("temporary metadata in chk-1 survived: %v", err)
	}
	for _, keep := range []string{"chk-1/_metadata", "shared/keep", "notes.txt", "chk-x", "taskowned"} {
		if _, err := os.Stat(filepath.Join(jobDir, keep)); err != nil {
			t.Fatalf("%s was removed: %v", keep, err)
		}
	}
	if list, err := b.ListCompletedCheckpoints(ctx); err != nil || len(list) != 1 {
		t.Fatalf("list after cleanup: %v %v", list, err)
	}
}

func TestListOrderingAndDispose(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	if list, err := a.ListCompletedCheckpoints(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty job: %v %v", list, err)
	}
	var states []sdk.StreamStateHandle
	for _, id := range []int64{10, 2, 9, 100, 1} {
		_, h := completeCheckpoint(t, a, id, []byte{byte(id)})
		states = append(states, h)
	}
	list, err := a.ListCompletedCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, c := range list {
		ids = append(ids, c.CheckpointID)
	}
	if want := []int64{1, 2, 9, 10, 100}; !equalIDs(ids, want) {
		t.Fatalf("list order %v, want %v", ids, want)
	}
	// Savepoints are not listed.
	if _, err := a.InitializeLocationForSavepoint(ctx, 5, filepath.Join(dir, "sp")); err != nil {
		t.Fatal(err)
	}
	if err := a.DisposeCheckpoint(ctx, list[1]); err != nil { // chk-2
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "chk-2")); !os.IsNotExist(err) {
		t.Fatalf("chk-2 still exists after dispose: %v", err)
	}
	if _, err := a.OpenState(ctx, states[1]); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("exclusive state of a disposed checkpoint: got %v, want ErrNotFound", err)
	}
	if _, err := s.ResolveCheckpoint(ctx, list[1].ExternalPointer); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("resolve disposed: %v", err)
	}
	if err := a.DisposeCheckpoint(ctx, list[1]); err != nil {
		t.Fatalf("disposing twice: %v", err)
	}
	list, _ = a.ListCompletedCheckpoints(ctx)
	if len(list) != 4 || list[1].CheckpointID != 9 {
		t.Fatalf("after dispose: %+v", list)
	}
	// Dispose refuses directories that are not checkpoint locations.
	bad := sdk.CompletedCheckpointStorageLocation{ExternalPointer: filepath.Join(dir, "job")}
	if err := a.DisposeCheckpoint(ctx, bad); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Fatalf("dispose job dir: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "chk-9")); err != nil {
		t.Fatal(err)
	}
}

func TestDisposeOnFailure(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	loc, err := a.InitializeLocationForCheckpoint(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	writeState(t, loc, sdk.ScopeExclusive, pattern(1<<20, 0), 1<<16)
	shared := writeState(t, loc, sdk.ScopeShared, pattern(1<<20, 1), 1<<16)
	if err := loc.DisposeOnFailure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "chk-4")); !os.IsNotExist(err) {
		t.Fatalf("chk-4 survived DisposeOnFailure: %v", err)
	}
	assertSame(t, "shared state kept", readState(t, a, shared), pattern(1<<20, 1))
}

func TestDiscardState(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	sh := writeState(t, loc, sdk.ScopeShared, pattern(1<<20, 5), 1<<20)
	ex := writeState(t, loc, sdk.ScopeExclusive, pattern(1<<20, 6), 1<<20)
	inline := writeState(t, loc, sdk.ScopeShared, []byte("small"), 5)
	if err := a.DiscardState(ctx, []sdk.StreamStateHandle{sh, ex, inline}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []sdk.StreamStateHandle{sh, ex} {
		if _, err := a.OpenState(ctx, h); !errors.Is(err, sdk.ErrNotFound) {
			t.Fatalf("discarded %q still opens: %v", h.Ref, err)
		}
	}
	if err := a.DiscardState(ctx, []sdk.StreamStateHandle{sh}); err != nil {
		t.Fatalf("discarding a missing file: %v", err)
	}
	// Path traversal and foreign files are refused, and the files stay.
	victim := filepath.Join(filepath.Dir(dir), "victim")
	mustWrite(t, victim, "precious")
	for _, ref := range []string{
		"file://" + victim,
		victim,
		"file://" + dir + "/job/shared/../../../victim",
		dir + "/job/../../victim",
		"file://" + dir,
		"file://" + filepath.Join(dir, "job", "shared"),
	} {
		err := a.DiscardState(ctx, []sdk.StreamStateHandle{{Ref: ref}})
		if !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Fatalf("DiscardState(%q): got %v, want ErrInvalidArgument", ref, err)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("victim removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "shared")); err != nil {
		t.Fatalf("shared dir removed: %v", err)
	}
}

func TestSavepoints(t *testing.T) {
	ctx := context.Background()
	spDefault := filepath.Join(t.TempDir(), "savepoints")
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "wordcount-job")
	if a.HasDefaultSavepointLocation() {
		t.Fatalf("HasDefaultSavepointLocation without savepoint-dir")
	}
	_, err := a.InitializeLocationForSavepoint(ctx, 1, "")
	if !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(err.Error(), "No savepoint location given and no default location configured.") {
		t.Fatalf("savepoint without location: got %v", err)
	}
	s2, _ := newConfigured(t, sdk.Options{sdk.OptionSavepointDir: "file://" + spDefault})
	b := newJob(t, s2, "wordcount-job")
	if !b.HasDefaultSavepointLocation() || !b.SupportsHighlyAvailableStorage() {
		t.Fatalf("HasDefaultSavepointLocation/SupportsHighlyAvailableStorage false")
	}
	name := regexp.MustCompile(`^savepoint-wordco-[0-9a-f]{12}$`)
	target := filepath.Join(dir, "explicit")
	for _, tc := range []struct {
		acc    sdk.CheckpointStorageAccess
		target string
		base   string
	}{{a, target, target}, {b, "", spDefault}, {b, target, target}} {
		loc, err := tc.acc.InitializeLocationForSavepoint(ctx, 42, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		ref := loc.LocationReference()
		if filepath.Dir(ref) != tc.base || !name.MatchString(filepath.Base(ref)) {
			t.Fatalf("savepoint location %q: want %s/savepoint-wordco-<12 hex>", ref, tc.base)
		}
		ex := writeState(t, loc, sdk.ScopeExclusive, pattern(1<<20, 1), 1<<20)
		sh := writeState(t, loc, sdk.ScopeShared, pattern(1<<20, 2), 1<<20)
		for _, h := range []sdk.StreamStateHandle{ex, sh} {
			if !strings.HasPrefix(h.Ref, "file://"+ref+"/") {
				t.Fatalf("savepoint state %q is not inside %s (savepoints are self-contained)", h.Ref, ref)
			}
		}
		c := finalize(t, loc, []byte("sp"))
		r, err := s.ResolveCheckpoint(ctx, c.ExternalPointer)
		if err != nil || r.ExternalPointer != ref {
			t.Fatalf("resolve savepoint: %+v %v", r, err)
		}
		if err := tc.acc.DisposeCheckpoint(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(ref); !os.IsNotExist(err) {
			t.Fatalf("savepoint dir survived dispose: %v", err)
		}
	}
	short := newJob(t, s, "ab")
	loc, err := short.InitializeLocationForSavepoint(ctx, 1, target)
	if err != nil || !regexp.MustCompile(`/savepoint-ab-[0-9a-f]{12}$`).MatchString(loc.LocationReference()) {
		t.Fatalf("short job id savepoint: %v %v", loc, err)
	}
}

func TestResolveErrors(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	completeCheckpoint(t, a, 1, []byte("x"))
	plain := filepath.Join(dir, "job", "notes.txt")
	mustWrite(t, plain, "x")
	for _, tc := range []struct {
		pointer string
		kind    error
		text    string
	}{
		{filepath.Join(dir, "nope"), sdk.ErrNotFound, filepath.Join(dir, "nope")},
		{filepath.Join(dir, "job", "shared"), sdk.ErrNotFound, "Cannot find meta data file '_metadata' in directory '" + filepath.Join(dir, "job", "shared") + "'"},
		{plain, sdk.ErrInvalidArgument, plain},
		{"/dev/null", sdk.ErrInvalidArgument, "/dev/null"},
		{"", sdk.ErrInvalidArgument, "pointer"},
		{"s3://bucket/chk-1", nil, "s3://bucket/chk-1"}, // no S3 server: see TestMain
		{"hdfs://nn/chk-1", sdk.ErrUnsupported, "hdfs"},
		{"file://otherhost/chk-1", sdk.ErrInvalidArgument, "otherhost"},
	} {
		_, err := s.ResolveCheckpoint(ctx, tc.pointer)
		if err == nil || (tc.kind != nil && !errors.Is(err, tc.kind)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("ResolveCheckpoint(%q): got %v, want %v containing %q", tc.pointer, err, tc.kind, tc.text)
		}
	}
}

func TestJobIDsAreSingleDirectoryNames(t *testing.T) {
	s, dir := newConfigured(t, nil)
	for _, id := range []string{"", ".", "..", "../evil", "a/b", `a\b`, "x/../../y", "a..b", "nul\x00"} {
		if _, err := s.CreateCheckpointStorage(context.Background(), id); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("job id %q: got %v, want ErrInvalidArgument", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); !os.IsNotExist(err) {
		t.Fatalf("a directory was created outside: %v", err)
	}
	for _, id := range []string{"wordcount", "job-1_A.b", "7f3a9c0e2b1d4c5a"} {
		if _, err := s.CreateCheckpointStorage(context.Background(), id); err != nil {
			t.Errorf("job id %q refused: %v", id, err)
		}
	}
	if _, err := New(Local{}, Config{}).CreateCheckpointStorage(context.Background(), "job"); !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(err.Error(), `"dir"`) {
		t.Fatalf("no dir configured: got %v", err)
	}
}

func TestNegativeCheckpointIDRefused(t *testing.T) {
	s, _ := newConfigured(t, nil)
	if _, err := newJob(t, s, "j").InitializeLocationForCheckpoint(context.Background(), -1); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Fatalf("checkpoint -1: got %v", err)
	}
}

func TestSyncFailureFailsFinalize(t *testing.T) {
	ctx := context.Background()
	s, dir := newConfigured(t, nil)
	a := newJob(t, s, "job")
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.fs = &faultFS{failAfter: 1 << 30, syncDirFail: true}
	m, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Write([]byte("md"))
	if _, err := m.CloseAndFinalize(ctx); !errors.Is(err, syscall.EIO) {
		t.Fatalf("finalize with failing fsync: got %v, want EIO", err)
	}
	if _, err := s.ResolveCheckpoint(ctx, filepath.Join(dir, "job", "chk-1")); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("checkpoint whose state could not be synced resolves: %v", err)
	}
	if files := filesUnder(t, filepath.Join(dir, "job", "chk-1")); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

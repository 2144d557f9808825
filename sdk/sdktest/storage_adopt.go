package sdktest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// adoptChecks tests the optional sdk.RemoteFileAdopter, when the storage's access
// implements it and takes over files on this machine's disk (a storage on another medium
// refuses them with sdk.ErrUnsupported, which the kit accepts): an adopted file becomes a
// shared handle with the file's size and checksum that reads the file in place, adopting it
// again gives the same ref, the file is listed as shared state (sdk.SharedStateLister) and
// DiscardState deletes it; a missing file, or one of another size, is refused with
// sdk.ErrUnsupported.
func adoptChecks(t *testing.T, factory StorageFactory) {
	ctx := context.Background()
	a := openAccess(t, factory(t), "adopt")
	r, ok := a.(sdk.RemoteFileAdopter)
	if !ok {
		t.Logf("the access (%T) does not implement the optional sdk.RemoteFileAdopter: nothing to check", a)
		return
	}
	dir := t.TempDir()
	data := payload(200_000, 7)
	path := filepath.Join(dir, "000007.ldb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	file := sdk.StreamStateHandle{Ref: "file://" + path, Size: int64(len(data)), Scope: sdk.ScopeShared, Checksum: Checksum(data)}
	hs, err := r.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{file})
	if errors.Is(err, sdk.ErrUnsupported) {
		t.Logf("the storage does not take over files on this machine's disk (%v): nothing more to check", err)
		return
	}
	if err != nil {
		t.Fatalf("AdoptRemoteFiles(%s): %v", file.Ref, err)
	}
	if len(hs) != 1 {
		t.Fatalf("AdoptRemoteFiles of one file returned %d handles", len(hs))
	}
	h := hs[0]
	if h.Scope != sdk.ScopeShared || h.Ref == "" || len(h.Inline) != 0 || h.Size != file.Size || h.Checksum != file.Checksum {
		t.Fatalf("adopted handle %s: want a shared handle with a Ref, %d bytes and checksum %08x", describe(h), file.Size, file.Checksum)
	}
	checkState(t, a, h, data)
	again, err := r.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{file})
	if err != nil || len(again) != 1 || again[0].Ref != h.Ref {
		t.Fatalf("adopting %s again = %v, %v; want the same ref %q", file.Ref, again, err, h.Ref)
	}
	for _, bad := range []sdk.StreamStateHandle{
		{Ref: "file://" + filepath.Join(dir, "missing.ldb"), Size: 10, Scope: sdk.ScopeShared},
		{Ref: file.Ref, Size: file.Size + 1, Scope: sdk.ScopeShared, Checksum: file.Checksum},
	} {
		if _, err := r.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{bad}); !errors.Is(err, sdk.ErrUnsupported) {
			t.Errorf("AdoptRemoteFiles(%s of %d bytes) = %v; want an error wrapping sdk.ErrUnsupported", bad.Ref, bad.Size, err)
		}
	}
	listed := func() bool {
		t.Helper()
		l, ok := a.(sdk.SharedStateLister)
		if !ok {
			return false
		}
		got, err := l.ListSharedState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(got, func(g sdk.StreamStateHandle) bool { return g.Ref == h.Ref })
	}
	if _, lists := a.(sdk.SharedStateLister); lists && !listed() {
		t.Errorf("ListSharedState does not list the adopted file %q", h.Ref)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the adopted file changed: %d bytes, %v", len(b), err)
	}
	if err := a.DiscardState(ctx, []sdk.StreamStateHandle{h}); err != nil {
		t.Fatalf("DiscardState of the adopted file %q: %v", h.Ref, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("DiscardState of the adopted file %q left %s (%v)", h.Ref, path, err)
	}
	checkGone(t, a, h, "DiscardState")
	if listed() {
		t.Errorf("ListSharedState lists the adopted file %q after DiscardState", h.Ref)
	}
}

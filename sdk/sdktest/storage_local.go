package sdktest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// localFileChecks tests the optional sdk.LocalStateFactory, when the storage's locations
// implement it: a file it creates is an empty local file the caller can write; published,
// it reads back as a stream of the same bytes would, inline or not; discarded, or published
// with the wrong size (an error wrapping sdk.ErrCorrupt), it is gone.
func localFileChecks(t *testing.T, factory StorageFactory) {
	ctx := context.Background()
	a := openAccess(t, factory(t), "sdktest-local-files")
	loc := checkpointLocation(t, a, 1)
	f, ok := loc.(sdk.LocalStateFactory)
	if !ok {
		t.Logf("the location (%T) does not implement the optional sdk.LocalStateFactory: nothing to check", loc)
		return
	}
	// written creates a local file of scope, checks that it is an empty regular file and
	// writes data into it, as a backend plugin would; "" (logged) when the location has no
	// local file for scope.
	written := func(t *testing.T, scope sdk.Scope, data []byte) string {
		t.Helper()
		path, err := f.CreateLocalStateFile(ctx, scope)
		if err != nil {
			t.Fatalf("CreateLocalStateFile(%s): %v", scope, err)
		}
		if path == "" {
			t.Logf("the location has no local file for %s state: nothing to check", scope)
			return ""
		}
		if !filepath.IsAbs(path) {
			t.Fatalf("CreateLocalStateFile(%s) = %q: not an absolute path", scope, path)
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Fatalf("CreateLocalStateFile(%s) = %q: want an empty regular file (%v)", scope, path, err)
		}
		if err := os.WriteFile(path, data, 0); err != nil {
			t.Fatalf("writing the local state file: %v", err)
		}
		return path
	}
	gone := func(t *testing.T, path, why string) {
		t.Helper()
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("state file %s still exists after %s (%v)", path, why, err)
		}
	}
	for _, scope := range []sdk.Scope{sdk.ScopeExclusive, sdk.ScopeShared} {
		for i, size := range streamSizes {
			t.Run(fmt.Sprintf("Publish/%s/%s", scope, size.name), func(t *testing.T) {
				data := payload(size.n, byte(40+i))
				path := written(t, scope, data)
				if path == "" {
					return
				}
				h, err := f.PublishLocalStateFile(ctx, path, scope, int64(len(data)), host.Checksum(data))
				if err != nil {
					t.Fatalf("PublishLocalStateFile of %d bytes: %v", len(data), err)
				}
				checkStreamHandle(t, h, scope, len(data))
				checkState(t, a, h, data)
				if h.Ref == "" {
					gone(t, path, "its bytes came back inline")
				}
			})
		}
	}
	t.Run("Discard", func(t *testing.T) {
		path := written(t, sdk.ScopeShared, payload(3<<20, 7))
		if path == "" {
			return
		}
		if err := f.DiscardLocalStateFile(ctx, path); err != nil {
			t.Fatalf("DiscardLocalStateFile: %v", err)
		}
		gone(t, path, "DiscardLocalStateFile")
	})
	t.Run("WrongSizeIsCorrupt", func(t *testing.T) {
		data := payload(3<<20, 8)
		path := written(t, sdk.ScopeExclusive, data)
		if path == "" {
			return
		}
		_, err := f.PublishLocalStateFile(ctx, path, sdk.ScopeExclusive, int64(len(data))+1, host.Checksum(data))
		if !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("PublishLocalStateFile with a size one more than the file's: %v, want an error wrapping sdk.ErrCorrupt", err)
		}
		gone(t, path, "a failed PublishLocalStateFile")
	})
}

package sdktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// processBackends are the state backends ProcessStateBackend returned: restores of these
// cross a process boundary.
var processBackends sync.Map

// localFiles is a StateReader over the streams of a MemoryStreams written out as files. It
// implements sdk.LocalStateLocator, as the runner's reader over a file:// fsstorage does,
// and counts the handles read through it rather than from the files directly.
type localFiles struct {
	files  map[string]string // Ref -> file holding its bytes
	locate func(ref, file string) string
	opens  atomic.Int64
}

// writeLocalFiles writes every stream of streams into a file of its own; LocalStatePath
// answers locate(ref, file), by default the file itself.
func writeLocalFiles(t *testing.T, streams *MemoryStreams) *localFiles {
	t.Helper()
	dir := t.TempDir()
	lf := &localFiles{files: map[string]string{}, locate: func(_, file string) string { return file }}
	streams.mu.Lock()
	defer streams.mu.Unlock()
	for ref, b := range streams.blobs {
		p := filepath.Join(dir, fmt.Sprintf("state-%d", len(lf.files)))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatalf("writing local state file: %v", err)
		}
		lf.files[ref] = p
	}
	return lf
}

// Open implements sdk.StateReader: the handle's file, verified against the handle.
func (l *localFiles) Open(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	l.opens.Add(1)
	if h.Ref == "" {
		return NewVerifyingReader(io.NopCloser(bytes.NewReader(h.Inline)), h), nil
	}
	p, ok := l.files[h.Ref]
	if !ok {
		return nil, fmt.Errorf("local files: state handle %q: %w", h.Ref, sdk.ErrNotFound)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return NewVerifyingReader(f, h), nil
}

// LocalStatePath implements sdk.LocalStateLocator.
func (l *localFiles) LocalStatePath(_ context.Context, h sdk.StreamStateHandle) (string, error) {
	p, ok := l.files[h.Ref]
	if !ok {
		return "", nil
	}
	return l.locate(h.Ref, p), nil
}

// localRestoreChecks restore from handles the runner's reader locates as local files: a
// backend in a plugin process reads them itself (verified like any other read), and falls
// back to reading through the runner when it cannot open them.
func localRestoreChecks(t *testing.T, factory BackendFactory) {
	t.Run("LocalFilesReadInThePlugin", func(t *testing.T) {
		streams := NewMemoryStreams()
		m, handles := snapshotSubtasks(t, factory(t), "local-files", 1, 2000, streams)
		lf := writeLocalFiles(t, streams)
		sb := factory(t)
		kb := OpenRestored(t, sb, fullParams("local-files"), handles, lf)
		CheckContents(t, kb, m)
		if _, ok := processBackends.Load(sb); ok && lf.opens.Load() != 0 {
			t.Errorf("a backend in a plugin process read %d local state files through the runner; want it to read them itself", lf.opens.Load())
		}
	})
	t.Run("UnreadableLocalFileIsReadThroughTheRunner", func(t *testing.T) {
		streams := NewMemoryStreams()
		m, handles := snapshotSubtasks(t, factory(t), "local-missing", 1, 2000, streams)
		lf := writeLocalFiles(t, streams)
		lf.locate = func(_, file string) string { return file + ".not-here" }
		kb := OpenRestored(t, factory(t), fullParams("local-missing"), handles, lf)
		CheckContents(t, kb, m)
	})
	t.Run("DamagedLocalFileIsCorrupt", func(t *testing.T) {
		streams := NewMemoryStreams()
		_, handles := snapshotSubtasks(t, factory(t), "local-damaged", 1, 2000, streams)
		lf := writeLocalFiles(t, streams)
		for _, p := range lf.files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 {
				b[len(b)/2] ^= 0x41
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		kb := OpenKeyed(t, factory(t), fullParams("local-damaged"))
		err := kb.Restore(context.Background(), handles, lf)
		if !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("Restore from damaged local state files: %v; want an error wrapping sdk.ErrCorrupt", err)
		}
	})
}

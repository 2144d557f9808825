package sdktest

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// AdoptingStreams are MemoryStreams that also take over local files a backend keeps on a
// store of its own (sdk.RemoteFileAdopter), as a checkpoint storage on the same disk does:
// an adopted file keeps its file:// URI as its Ref, and Open reads it where it is, checking
// its size and checksum against the handle. Files of any other scheme, or not found with
// their size, are refused with an error wrapping sdk.ErrUnsupported. It is safe for
// concurrent use.
type AdoptingStreams struct {
	*MemoryStreams
	mu      sync.Mutex
	adopted map[string]string // Ref -> local path
}

// NewAdoptingStreams returns empty AdoptingStreams.
func NewAdoptingStreams() *AdoptingStreams {
	return &AdoptingStreams{MemoryStreams: NewMemoryStreams(), adopted: map[string]string{}}
}

var _ sdk.RemoteFileAdopter = (*AdoptingStreams)(nil)

// AdoptRemoteFiles implements sdk.RemoteFileAdopter for local files.
func (a *AdoptingStreams) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	out := make([]sdk.StreamStateHandle, len(files))
	paths := make([]string, len(files))
	for i, f := range files {
		u, err := url.Parse(f.Ref)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("adopting streams: %q is not a local file: %w", f.Ref, sdk.ErrUnsupported)
		}
		p := filepath.Clean(u.Path)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
			return nil, fmt.Errorf("adopting streams: no file of %d bytes at %s: %w", f.Size, p, sdk.ErrUnsupported)
		}
		paths[i] = p
		out[i] = sdk.StreamStateHandle{Ref: "file://" + p, Size: f.Size, Scope: sdk.ScopeShared, Checksum: f.Checksum}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, h := range out {
		a.adopted[h.Ref] = paths[i]
	}
	return out, nil
}

// Open implements sdk.StateReader: an adopted file is read where it is, any other handle
// from the MemoryStreams.
func (a *AdoptingStreams) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	a.mu.Lock()
	p, ok := a.adopted[h.Ref]
	a.mu.Unlock()
	if !ok {
		return a.MemoryStreams.Open(ctx, h)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("adopting streams: state handle %q: %w", h.Ref, err)
	}
	return NewVerifyingReader(f, h), nil
}

// Adopted returns the Refs of the files adopted so far, sorted.
func (a *AdoptingStreams) Adopted() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for ref := range a.adopted {
		out = append(out, ref)
	}
	slices.Sort(out)
	return out
}

// adoptedFileChecks snapshot and restore with streams that take over local files
// (AdoptingStreams), as the runner's streams do over a storage that adopts them: a
// backend that adopts none is unaffected; one that does references every file it adopted
// as a shared file of its handles, and its checkpoints restore, in a fresh backend, to the
// frozen view, the second one after the state changed (files adopted for the first may be
// listed again).
func adoptedFileChecks(t *testing.T, factory BackendFactory) {
	p := fullParams("adopted")
	kb := OpenKeyed(t, factory(t), p)
	m := make(Model)
	streams := NewAdoptingStreams()
	for id := int64(1); id <= 2; id++ {
		Fill(t, kb, m, p.KeyGroups, 50000, fmt.Sprintf("v%d", id))
		frozen := m.Clone()
		opts := sdk.SnapshotOptions{CheckpointID: id}
		before := streams.Adopted()
		handles := finishSnapshot(t, startSnapshot(t, kb, opts), p, opts, streams)
		referenced := map[string]bool{}
		for _, h := range handles {
			for _, f := range h.Files {
				if f.Handle.Scope == sdk.ScopeShared {
					referenced[f.Handle.Ref] = true
				}
			}
		}
		adopted := streams.Adopted()
		for _, ref := range adopted {
			if !slices.Contains(before, ref) && !referenced[ref] {
				t.Errorf("checkpoint %d adopted %s but none of its handles references it as a shared file", id, ref)
			}
		}
		t.Logf("checkpoint %d: %d files adopted so far", id, len(adopted))
		if err := kb.NotifyCheckpointComplete(context.Background(), id); err != nil {
			t.Fatalf("NotifyCheckpointComplete(%d): %v", id, err)
		}
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), frozen)
	}
}

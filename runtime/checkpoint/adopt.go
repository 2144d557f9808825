package checkpoint

import (
	"context"
	"fmt"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// adoptions are the files the live backends had the storage take over
// (sdk.RemoteFileAdopter) for checkpoints of the current attempt that no completed
// checkpoint references yet. They stay the backends' (see sdk.RemoteFileAdopter): a failed
// checkpoint's discard leaves them alone, Add hands those a completed checkpoint references
// to the registry, and DiscardDeferred, once the attempt's keyed backends are closed,
// discards the others no retained checkpoint references.
type adoptions struct {
	mu   sync.Mutex
	refs map[string]sdk.StreamStateHandle
}

// note records the handles of adopted files.
func (a *adoptions) note(hs []sdk.StreamStateHandle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs == nil {
		a.refs = map[string]sdk.StreamStateHandle{}
	}
	for _, h := range hs {
		a.refs[h.Ref] = h
	}
}

// has reports whether ref is an adopted file no completed checkpoint references yet.
func (a *adoptions) has(ref string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.refs[ref]
	return ok
}

// settle forgets the adopted files m references: a completed checkpoint's now.
func (a *adoptions) settle(m *Metadata) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range sharedHandles(m) {
		delete(a.refs, h.Ref)
	}
}

// take returns and forgets every adopted file.
func (a *adoptions) take() []sdk.StreamStateHandle {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]sdk.StreamStateHandle, 0, len(a.refs))
	for _, h := range a.refs {
		out = append(out, h)
	}
	a.refs = nil
	return out
}

// Adopting returns f, a checkpoint's stream factory, implementing sdk.RemoteFileAdopter
// through the store's access when that access does (and keeping sdk.LocalStateFactory when
// f has it), so that a backend's Snapshot.Write can have the storage take its files over;
// the store records what it adopted. A savepoint's factory must not adopt: a savepoint holds
// its state's bytes.
func (s *Store) Adopting(f sdk.CheckpointStreamFactory) sdk.CheckpointStreamFactory {
	if _, ok := s.access.(sdk.RemoteFileAdopter); !ok {
		return f
	}
	a := storeAdopter{s}
	if l, ok := f.(sdk.LocalStateFactory); ok {
		return struct {
			sdk.CheckpointStreamFactory
			sdk.LocalStateFactory
			sdk.RemoteFileAdopter
		}{f, l, a}
	}
	return struct {
		sdk.CheckpointStreamFactory
		sdk.RemoteFileAdopter
	}{f, a}
}

// storeAdopter adopts files through the store's access and records them.
type storeAdopter struct {
	s *Store
}

// AdoptRemoteFiles implements sdk.RemoteFileAdopter.
func (a storeAdopter) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	r, ok := a.s.access.(sdk.RemoteFileAdopter)
	if !ok { // the storage restarted as one that does not adopt
		return nil, fmt.Errorf("adopt %d remote files: the checkpoint storage does not: %w", len(files), sdk.ErrUnsupported)
	}
	hs, err := r.AdoptRemoteFiles(ctx, files)
	if err != nil {
		return nil, err
	}
	if len(hs) != len(files) {
		return nil, fmt.Errorf("adopt %d remote files: the checkpoint storage returned %d handles: %w", len(files), len(hs), sdk.ErrCorrupt)
	}
	for i, h := range hs {
		if h.Scope != sdk.ScopeShared || h.Ref == "" || h.Size != files[i].Size {
			return nil, fmt.Errorf("adopt remote file %s: the checkpoint storage returned %+v, want a shared handle with a ref and %d bytes: %w", files[i].Ref, h, files[i].Size, sdk.ErrCorrupt)
		}
		hs[i].Checksum = files[i].Checksum // the backend's, as the runner's own streams count theirs
	}
	a.s.adopted.note(hs)
	return hs, nil
}

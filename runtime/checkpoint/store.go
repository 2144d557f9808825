package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
)

// Completed is a completed checkpoint the runner retains.
type Completed struct {
	// Location is where the storage keeps it.
	Location sdk.CompletedCheckpointStorageLocation
	// Metadata is its decoded metadata.
	Metadata *Metadata
	// Owned says the runner may dispose of it under retention. Checkpoints restored from an
	// explicit pointer (a savepoint, say) are never owned.
	Owned bool
}

// Store keeps the retained completed checkpoints of a job: it applies num-retained,
// disposes of older checkpoints through the storage, and acts as the shared-state
// registry: a shared stream is discarded once no retained checkpoint references it.
//
// Two rules keep shared streams a later checkpoint may still need:
//   - the shared streams of checkpoints the runner does not own (restored from an explicit
//     pointer, perhaps another job's) are never discarded;
//   - a shared stream that became unreferenced when a checkpoint was disposed is discarded
//     only when the next checkpoint is added and does not reference it either. A keyed
//     backend builds on the newest checkpoint it was told completed; a snapshot taken just
//     before that notification arrived still references the files of the checkpoint
//     before, which retention may just have disposed.
//
// Files a backend had the storage adopt (sdk.RemoteFileAdopter, see Adopting) are shared
// streams too, with one more rule: until a checkpoint that references them completes they
// are the live backend's, so the discard of a failed checkpoint leaves them alone, and
// only once the attempt ended (DiscardDeferred) are those no retained checkpoint references
// discarded. Once one is referenced by a completed checkpoint, retention alone decides,
// as for any shared stream: the live state of a backend reads only adopted files its
// newest checkpoint references.
type Store struct {
	access      sdk.CheckpointStorageAccess
	numRetained int
	retained    []*Completed
	maxID       int64
	// protected are shared refs never discarded: those of checkpoints not owned.
	protected map[string]bool
	// deferred are shared streams unreferenced since the last Add, discarded at the next
	// one unless referenced again.
	deferred []sdk.StreamStateHandle
	// adopted are the files adopted for checkpoints no completed one references yet.
	adopted adoptions

	// OnDispose, if set, is called with the id of every checkpoint retention disposed of.
	OnDispose func(id int64)
}

// NewStore returns a store that retains numRetained checkpoints (at least 1).
func NewStore(access sdk.CheckpointStorageAccess, numRetained int) *Store {
	if numRetained < 1 {
		numRetained = 1
	}
	return &Store{access: access, numRetained: numRetained, protected: map[string]bool{}}
}

// SetAccess replaces the storage access, after the storage plugin was restarted.
func (s *Store) SetAccess(a sdk.CheckpointStorageAccess) { s.access = a }

// Access returns the current storage access.
func (s *Store) Access() sdk.CheckpointStorageAccess { return s.access }

// Latest returns the newest retained checkpoint, or nil.
func (s *Store) Latest() *Completed {
	if len(s.retained) == 0 {
		return nil
	}
	return s.retained[len(s.retained)-1]
}

// Retained returns the retained checkpoints, oldest first.
func (s *Store) Retained() []*Completed { return append([]*Completed(nil), s.retained...) }

// Forget drops every retained checkpoint without disposing of it (their storage lost
// them). Ids already used stay used.
func (s *Store) Forget() {
	s.retained, s.deferred = nil, nil
	s.adopted.take()
}

// ObserveID records that checkpoint id was used, so NextID never reuses it.
func (s *Store) ObserveID(id int64) {
	if id > s.maxID {
		s.maxID = id
	}
}

// NextID returns a fresh checkpoint id.
func (s *Store) NextID() int64 {
	s.maxID++
	return s.maxID
}

// Add retains c and disposes of the oldest owned checkpoints beyond num-retained,
// discarding shared state no retained checkpoint still references. Disposal errors are
// returned but c stays retained.
func (s *Store) Add(ctx context.Context, c *Completed) error { return s.AddAll(ctx, []*Completed{c}) }

// AddAll retains cs, oldest first, then applies retention once, as Add does: a runner
// resuming a job adopts the job's earlier checkpoints this way.
func (s *Store) AddAll(ctx context.Context, cs []*Completed) error {
	for _, c := range cs {
		s.ObserveID(c.Metadata.CheckpointID)
		s.retained = append(s.retained, c)
		s.adopted.settle(c.Metadata)
		if !c.Owned {
			for _, h := range sharedHandles(c.Metadata) {
				s.protected[h.Ref] = true
			}
		}
	}
	var errs []error
	var unreferenced []sdk.StreamStateHandle
	for len(s.retained) > s.numRetained {
		old := s.retained[0]
		s.retained = s.retained[1:]
		if !old.Owned {
			continue
		}
		if err := s.access.DisposeCheckpoint(ctx, old.Location); err != nil {
			errs = append(errs, fmt.Errorf("dispose checkpoint %d (%s): %w", old.Metadata.CheckpointID, old.Location.ExternalPointer, err))
			continue
		}
		if s.OnDispose != nil {
			s.OnDispose(old.Metadata.CheckpointID)
		}
		unreferenced = append(unreferenced, sharedHandles(old.Metadata)...)
	}
	inUse := s.inUse()
	discard := unused(s.deferred, inUse)
	s.deferred = unused(unreferenced, inUse)
	if err := s.discard(ctx, discard, "no retained checkpoint references"); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("retention: %v", errs)
	}
	return nil
}

// DisposeOwned disposes of every retained checkpoint the runner owns, then discards the
// shared streams no remaining checkpoint references (nor a protected one): the cleanup of a
// cancelled job's checkpoints. Checkpoints not owned stay retained. It returns how many
// checkpoints it disposed of; one it could not dispose of stays retained.
func (s *Store) DisposeOwned(ctx context.Context) (int, error) {
	var keep []*Completed
	var unreferenced []sdk.StreamStateHandle
	var errs []error
	n := 0
	for _, c := range s.retained {
		if !c.Owned {
			keep = append(keep, c)
			continue
		}
		if err := s.access.DisposeCheckpoint(ctx, c.Location); err != nil {
			errs = append(errs, fmt.Errorf("dispose checkpoint %d (%s): %w", c.Metadata.CheckpointID, c.Location.ExternalPointer, err))
			keep = append(keep, c)
			continue
		}
		n++
		unreferenced = append(unreferenced, sharedHandles(c.Metadata)...)
	}
	s.retained = keep
	unreferenced = append(unreferenced, s.deferred...)
	s.deferred = nil
	if err := s.discard(ctx, unused(unreferenced, s.inUse()), "of disposed checkpoints"); err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// DiscardDeferred discards the deferred shared streams no retained checkpoint references,
// and the files adopted for checkpoints that never completed that none references. The
// runner calls it when an attempt ended, its keyed backends closed: no snapshot can
// reference them any more, nor live state read them.
func (s *Store) DiscardDeferred(ctx context.Context) error {
	inUse := s.inUse()
	discard := unused(s.deferred, inUse)
	s.deferred = nil
	err := s.discard(ctx, discard, "no retained checkpoint references")
	if aerr := s.discard(ctx, unused(s.adopted.take(), inUse), "adopted for checkpoints that never completed"); err == nil {
		err = aerr
	}
	return err
}

// discard deletes the shared streams hs (none: nothing to do); why says which they are.
func (s *Store) discard(ctx context.Context, hs []sdk.StreamStateHandle, why string) error {
	if len(hs) == 0 {
		return nil
	}
	if err := s.access.DiscardState(ctx, hs); err != nil {
		return fmt.Errorf("discard %d shared streams %s: %w", len(hs), why, err)
	}
	return nil
}

// inUse returns the shared refs that must not be discarded now: those of retained
// checkpoints and protected ones.
func (s *Store) inUse() map[string]bool {
	inUse := map[string]bool{}
	for ref := range s.protected {
		inUse[ref] = true
	}
	for _, r := range s.retained {
		for _, h := range sharedHandles(r.Metadata) {
			inUse[h.Ref] = true
		}
	}
	return inUse
}

// unused returns the handles whose refs are not in inUse, each ref once.
func unused(hs []sdk.StreamStateHandle, inUse map[string]bool) []sdk.StreamStateHandle {
	seen := map[string]bool{}
	var out []sdk.StreamStateHandle
	for _, h := range hs {
		if !inUse[h.Ref] && !seen[h.Ref] {
			seen[h.Ref] = true
			out = append(out, h)
		}
	}
	return out
}

// DiscardUnreferenced deletes the shared streams among states that no retained checkpoint
// references (nor a deferred discard may still save): the uploads of a checkpoint that
// failed or expired. Adopted files stay: they are the live backends' (see Store).
func (s *Store) DiscardUnreferenced(ctx context.Context, states []SubtaskState) error {
	inUse := s.inUse()
	for _, h := range s.deferred {
		inUse[h.Ref] = true
	}
	m := &Metadata{Operators: []OperatorState{{Subtasks: states}}}
	var uploads []sdk.StreamStateHandle
	for _, h := range unused(sharedHandles(m), inUse) {
		if !s.adopted.has(h.Ref) {
			uploads = append(uploads, h)
		}
	}
	return s.discard(ctx, uploads, "of a failed checkpoint")
}

// SharedRefs returns the refs of the shared streams m references.
func SharedRefs(m *Metadata) map[string]bool {
	out := map[string]bool{}
	for _, h := range sharedHandles(m) {
		out[h.Ref] = true
	}
	return out
}

// sharedHandles lists the shared, non-inline streams a checkpoint references.
func sharedHandles(m *Metadata) []sdk.StreamStateHandle {
	var out []sdk.StreamStateHandle
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, kh := range st.Keyed {
				for _, f := range kh.Files {
					if f.Handle.Scope == sdk.ScopeShared && f.Handle.Ref != "" {
						out = append(out, f.Handle)
					}
				}
			}
		}
	}
	return out
}

// Load reads and decodes the metadata of a completed location.
func Load(ctx context.Context, access sdk.CheckpointStorageAccess, loc sdk.CompletedCheckpointStorageLocation) (*Metadata, error) {
	b, err := Reader{Access: access}.ReadAll(ctx, loc.Metadata)
	if err != nil {
		return nil, fmt.Errorf("read metadata of %s: %w", loc.ExternalPointer, err)
	}
	m, err := DecodeMetadata(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc.ExternalPointer, err)
	}
	if loc.CheckpointID != 0 && loc.CheckpointID != m.CheckpointID {
		return nil, fmt.Errorf("%s: the metadata is of checkpoint %d, its location is of checkpoint %d (metadata copied from another checkpoint?): %w", loc.ExternalPointer, m.CheckpointID, loc.CheckpointID, sdk.ErrCorrupt)
	}
	return m, nil
}

// Publish writes m as the metadata of loc, completing the checkpoint.
func Publish(ctx context.Context, loc sdk.CheckpointStorageLocation, m *Metadata) (sdk.CompletedCheckpointStorageLocation, error) {
	b, err := m.Encode()
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	out, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("create metadata stream at %s: %w", loc.LocationReference(), err)
	}
	if _, err := out.Write(b); err != nil {
		out.Close()
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("write metadata at %s: %w", loc.LocationReference(), err)
	}
	done, err := out.CloseAndFinalize(ctx)
	if err != nil {
		return done, fmt.Errorf("finalize metadata at %s: %w", loc.LocationReference(), err)
	}
	return done, nil
}

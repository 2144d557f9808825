package checkpoint

import (
	"context"
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
type Store struct {
	access      sdk.CheckpointStorageAccess
	numRetained int
	retained    []*Completed
	maxID       int64
}

// NewStore returns a store that retains numRetained checkpoints (at least 1).
func NewStore(access sdk.CheckpointStorageAccess, numRetained int) *Store {
	if numRetained < 1 {
		numRetained = 1
	}
	return &Store{access: access, numRetained: numRetained}
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
func (s *Store) Forget() { s.retained = nil }

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
func (s *Store) Add(ctx context.Context, c *Completed) error {
	s.ObserveID(c.Metadata.CheckpointID)
	s.retained = append(s.retained, c)
	var errs []error
	for len(s.retained) > s.numRetained {
		old := s.retained[0]
		s.retained = s.retained[1:]
		if !old.Owned {
			continue
		}
		if err := s.dispose(ctx, old); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("retention: %v", errs)
	}
	return nil
}

func (s *Store) dispose(ctx context.Context, c *Completed) error {
	if err := s.access.DisposeCheckpoint(ctx, c.Location); err != nil {
		return fmt.Errorf("dispose checkpoint %d (%s): %w", c.Metadata.CheckpointID, c.Location.ExternalPointer, err)
	}
	inUse := map[string]bool{}
	for _, r := range s.retained {
		for _, h := range sharedHandles(r.Metadata) {
			inUse[h.Ref] = true
		}
	}
	var discard []sdk.StreamStateHandle
	for _, h := range sharedHandles(c.Metadata) {
		if !inUse[h.Ref] {
			inUse[h.Ref] = true // discard once
			discard = append(discard, h)
		}
	}
	if len(discard) > 0 {
		if err := s.access.DiscardState(ctx, discard); err != nil {
			return fmt.Errorf("discard %d shared files of checkpoint %d: %w", len(discard), c.Metadata.CheckpointID, err)
		}
	}
	return nil
}

// DiscardUnreferenced deletes the shared streams among states that no retained checkpoint
// references: the uploads of a checkpoint that failed or expired.
func (s *Store) DiscardUnreferenced(ctx context.Context, states []SubtaskState) error {
	inUse := map[string]bool{}
	for _, r := range s.retained {
		for _, h := range sharedHandles(r.Metadata) {
			inUse[h.Ref] = true
		}
	}
	m := &Metadata{Operators: []OperatorState{{Subtasks: states}}}
	var discard []sdk.StreamStateHandle
	for _, h := range sharedHandles(m) {
		if !inUse[h.Ref] {
			inUse[h.Ref] = true
			discard = append(discard, h)
		}
	}
	if len(discard) == 0 {
		return nil
	}
	if err := s.access.DiscardState(ctx, discard); err != nil {
		return fmt.Errorf("discard %d shared streams of a failed checkpoint: %w", len(discard), err)
	}
	return nil
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

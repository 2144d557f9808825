package ownership

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/optional"
)

// fence returns access behind check: every call that creates, deletes or disposes of
// something in the storage calls check first and fails with its error, so a runner that
// lost its job to another never deletes what the new owner wrote (a checkpoint directory
// of the same id, shared state it restored). Reads pass through. It keeps the optional
// interfaces of access the runner uses: SharedStateLister when access has it,
// RemoteFileAdopter behind the fence when access has it, and LocalStateLocator (answering
// "" when access has none, as the interface allows).
func fence(access sdk.CheckpointStorageAccess, check func() error) sdk.CheckpointStorageAccess {
	f := fencedAccess{CheckpointStorageAccess: access, check: check}
	inner := optional.AccessInterfacesOf(access)
	with := optional.AccessInterfaces{Lister: inner.Lister, Locator: f}
	if inner.Adopter != nil {
		with.Adopter = fencedAdopter{f, inner.Adopter}
	}
	return optional.Access(f, with)
}

// fencedAdopter is the RemoteFileAdopter of a fenced access: taking files over writes the
// storage's record of them.
type fencedAdopter struct {
	a fencedAccess
	r sdk.RemoteFileAdopter
}

// AdoptRemoteFiles implements sdk.RemoteFileAdopter behind the fence.
func (f fencedAdopter) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	if err := f.a.fence(fmt.Sprintf("adopt %d remote files", len(files))); err != nil {
		return nil, err
	}
	return f.r.AdoptRemoteFiles(ctx, files)
}

// fencedAccess is a CheckpointStorageAccess whose writes check a fence first.
type fencedAccess struct {
	sdk.CheckpointStorageAccess
	check func() error
}

var _ sdk.LocalStateLocator = fencedAccess{}

// fence returns the fence's error, naming the call it stopped.
func (a fencedAccess) fence(call string) error {
	if err := a.check(); err != nil {
		return fmt.Errorf("checkpoint storage: %s: %w", call, err)
	}
	return nil
}

// InitializeBaseLocationsForCheckpoint implements sdk.CheckpointStorageAccess behind the
// fence: it removes leftovers of checkpoints.
func (a fencedAccess) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
	if err := a.fence("initialize base locations"); err != nil {
		return err
	}
	return a.CheckpointStorageAccess.InitializeBaseLocationsForCheckpoint(ctx)
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess behind the fence.
func (a fencedAccess) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	if err := a.fence(fmt.Sprintf("initialize checkpoint %d", id)); err != nil {
		return nil, err
	}
	loc, err := a.CheckpointStorageAccess.InitializeLocationForCheckpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.location(loc), nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess behind the fence.
func (a fencedAccess) InitializeLocationForSavepoint(ctx context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	if err := a.fence(fmt.Sprintf("initialize savepoint %d", id)); err != nil {
		return nil, err
	}
	loc, err := a.CheckpointStorageAccess.InitializeLocationForSavepoint(ctx, id, target)
	if err != nil {
		return nil, err
	}
	return a.location(loc), nil
}

// DiscardState implements sdk.CheckpointStorageAccess behind the fence.
func (a fencedAccess) DiscardState(ctx context.Context, handles []sdk.StreamStateHandle) error {
	if err := a.fence(fmt.Sprintf("discard %d state streams", len(handles))); err != nil {
		return err
	}
	return a.CheckpointStorageAccess.DiscardState(ctx, handles)
}

// DisposeCheckpoint implements sdk.CheckpointStorageAccess behind the fence.
func (a fencedAccess) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	if err := a.fence("dispose of checkpoint " + loc.ExternalPointer); err != nil {
		return err
	}
	return a.CheckpointStorageAccess.DisposeCheckpoint(ctx, loc)
}

// LocalStatePath implements sdk.LocalStateLocator when the access does, and answers ""
// (not a local file) when it does not.
func (a fencedAccess) LocalStatePath(ctx context.Context, h sdk.StreamStateHandle) (string, error) {
	if l, ok := a.CheckpointStorageAccess.(sdk.LocalStateLocator); ok {
		return l.LocalStatePath(ctx, h)
	}
	return "", nil
}

// location returns loc behind the fence, keeping sdk.LocalStateFactory when loc has it:
// its files are state streams, which pass through as a stream's writes do.
func (a fencedAccess) location(loc sdk.CheckpointStorageLocation) sdk.CheckpointStorageLocation {
	factory, _ := loc.(sdk.LocalStateFactory)
	return optional.Location(fencedLocation{loc, a}, factory)
}

// fencedLocation is a CheckpointStorageLocation whose disposal and metadata publication
// check the fence first.
type fencedLocation struct {
	sdk.CheckpointStorageLocation
	a fencedAccess
}

// DisposeOnFailure implements sdk.CheckpointStorageLocation behind the fence.
func (l fencedLocation) DisposeOnFailure(ctx context.Context) error {
	if err := l.a.fence("dispose of failed checkpoint " + l.LocationReference()); err != nil {
		return err
	}
	return l.CheckpointStorageLocation.DisposeOnFailure(ctx)
}

// CreateMetadataOutputStream implements sdk.CheckpointStorageLocation: the stream checks
// the fence again right before it finalizes, so that a runner frozen while it wrote the
// metadata does not publish it once it wakes up without its lease.
func (l fencedLocation) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	out, err := l.CheckpointStorageLocation.CreateMetadataOutputStream(ctx)
	if err != nil {
		return nil, err
	}
	return fencedMetadata{out, l}, nil
}

// fencedMetadata is a MetadataOutputStream whose finalization checks the fence first.
type fencedMetadata struct {
	sdk.MetadataOutputStream
	l fencedLocation
}

// CloseAndFinalize implements sdk.MetadataOutputStream behind the fence; refused, it
// discards the metadata.
func (m fencedMetadata) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	if err := m.l.a.fence("publish checkpoint " + m.l.LocationReference()); err != nil {
		m.Close()
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	return m.MetadataOutputStream.CloseAndFinalize(ctx)
}

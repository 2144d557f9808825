package client

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/optional"
)

// newLocationClient returns the client of the location r describes: an
// sdk.LocalStateFactory exactly when the plugin's location is one
// (LocationResponse.local_state_files), since the runner discovers it with a type
// assertion.
func newLocationClient(c pb.CheckpointStorageClient, r *pb.LocationResponse) sdk.CheckpointStorageLocation {
	l := &locationClient{c: c, id: r.LocationId, ref: r.Reference}
	var factory sdk.LocalStateFactory
	if r.LocalStateFiles {
		factory = localFactoryClient{l}
	}
	return optional.Location(l, factory)
}

// localFactoryClient is the sdk.LocalStateFactory of a locationClient whose location
// creates local state files.
type localFactoryClient struct{ *locationClient }

var _ sdk.LocalStateFactory = localFactoryClient{}

// CreateLocalStateFile implements sdk.LocalStateFactory.
func (l localFactoryClient) CreateLocalStateFile(ctx context.Context, scope sdk.Scope) (string, error) {
	r, err := l.c.CreateLocalState(ctx, &pb.CreateLocalStateRequest{LocationId: l.id, Scope: convert.ScopeToProto(scope)})
	if err != nil {
		return "", convert.Errors.FromStatus(err)
	}
	return r.Path, nil
}

// PublishLocalStateFile implements sdk.LocalStateFactory.
func (l localFactoryClient) PublishLocalStateFile(ctx context.Context, path string, scope sdk.Scope, size int64, checksum uint32) (sdk.StreamStateHandle, error) {
	h, err := l.c.PublishLocalState(ctx, &pb.PublishLocalStateRequest{LocationId: l.id, Path: path, Scope: convert.ScopeToProto(scope), Size: size, Checksum: checksum})
	if err != nil {
		return sdk.StreamStateHandle{}, convert.Errors.FromStatus(err)
	}
	return convert.StreamHandleFromProto(h), nil
}

// DiscardLocalStateFile implements sdk.LocalStateFactory.
func (l localFactoryClient) DiscardLocalStateFile(ctx context.Context, path string) error {
	_, err := l.c.DiscardLocalState(ctx, &pb.DiscardLocalStateRequest{LocationId: l.id, Path: path})
	return convert.Errors.FromStatus(err)
}

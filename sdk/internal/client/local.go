package client

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// newLocationClient returns the client of the location r describes: an
// sdk.LocalStateFactory exactly when the plugin's location is one
// (LocationResponse.local_state_files), since the runner discovers it with a type
// assertion.
func newLocationClient(c pb.CheckpointStorageClient, r *pb.LocationResponse) sdk.CheckpointStorageLocation {
	l := &locationClient{c: c, id: r.LocationId, ref: r.Reference}
	if r.LocalStateFiles {
		return localLocationClient{l}
	}
	return l
}

// localLocationClient is a locationClient whose location creates local state files.
type localLocationClient struct{ *locationClient }

var _ sdk.LocalStateFactory = localLocationClient{}

// CreateLocalStateFile implements sdk.LocalStateFactory.
func (l localLocationClient) CreateLocalStateFile(ctx context.Context, scope sdk.Scope) (string, error) {
	r, err := l.c.CreateLocalState(ctx, &pb.CreateLocalStateRequest{LocationId: l.id, Scope: scopeToProto(scope)})
	if err != nil {
		return "", wireErrors.FromStatus(err)
	}
	return r.Path, nil
}

// PublishLocalStateFile implements sdk.LocalStateFactory.
func (l localLocationClient) PublishLocalStateFile(ctx context.Context, path string, scope sdk.Scope, size int64, checksum uint32) (sdk.StreamStateHandle, error) {
	h, err := l.c.PublishLocalState(ctx, &pb.PublishLocalStateRequest{LocationId: l.id, Path: path, Scope: scopeToProto(scope), Size: size, Checksum: checksum})
	if err != nil {
		return sdk.StreamStateHandle{}, wireErrors.FromStatus(err)
	}
	return streamHandleFromProto(h), nil
}

// DiscardLocalStateFile implements sdk.LocalStateFactory.
func (l localLocationClient) DiscardLocalStateFile(ctx context.Context, path string) error {
	_, err := l.c.DiscardLocalState(ctx, &pb.DiscardLocalStateRequest{LocationId: l.id, Path: path})
	return wireErrors.FromStatus(err)
}

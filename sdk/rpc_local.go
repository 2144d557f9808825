package sdk

import (
	"context"
	"fmt"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// LocalStatePath serves LocalStateLocator; an access that does not implement it gets an
// error wrapping ErrUnsupported.
func (s *storageServer) LocalStatePath(ctx context.Context, req *pb.LocalStatePathRequest) (*pb.LocalStatePathResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	l, ok := a.(LocalStateLocator)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d does not locate local state: %w", req.AccessId, ErrUnsupported)
	}
	p, err := l.LocalStatePath(ctx, streamHandleFromProto(req.Handle))
	if err != nil {
		return nil, err
	}
	return &pb.LocalStatePathResponse{Path: p}, nil
}

var _ LocalStateLocator = (*accessClient)(nil)

// LocalStatePath implements LocalStateLocator over the LocalStatePath RPC; it answers ""
// without a call when the plugin's access does not implement it.
func (a *accessClient) LocalStatePath(ctx context.Context, h StreamStateHandle) (string, error) {
	if !a.locates || h.Ref == "" {
		return "", nil
	}
	r, err := a.c.LocalStatePath(ctx, &pb.LocalStatePathRequest{AccessId: a.id, Handle: streamHandleToProto(h)})
	if err != nil {
		return "", fromStatus(err)
	}
	return r.Path, nil
}

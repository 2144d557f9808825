package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// ListSharedState serves SharedStateLister in batches of about wire.BatchBytes; an access
// that does not implement it gets an error wrapping ErrUnsupported.
func (s *storageServer) ListSharedState(req *pb.AccessRequest, st pb.CheckpointStorage_ListSharedStateServer) error {
	a, err := s.access(req.AccessId)
	if err != nil {
		return err
	}
	l, ok := a.(SharedStateLister)
	if !ok {
		return fmt.Errorf("checkpoint storage access %d does not list shared state: %w", req.AccessId, ErrUnsupported)
	}
	hs, err := l.ListSharedState(st.Context())
	if err != nil {
		return err
	}
	for len(hs) > 0 {
		n := batchEnd(hs, func(h StreamStateHandle) int { return len(h.Ref) + len(h.Inline) + 24 })
		if err := st.Send(&pb.ListSharedStateResponse{Handles: streamHandlesToProto(hs[:n])}); err != nil {
			return err
		}
		hs = hs[n:]
	}
	return nil
}

// sharedListerClient is the SharedStateLister of an accessClient whose plugin access
// implements it (see withOptionalInterfaces).
type sharedListerClient struct {
	a *accessClient
}

var _ SharedStateLister = sharedListerClient{}

// ListSharedState implements SharedStateLister over the ListSharedState RPC.
func (l sharedListerClient) ListSharedState(ctx context.Context) ([]StreamStateHandle, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := l.a.c.ListSharedState(ctx, &pb.AccessRequest{AccessId: l.a.id})
	if err != nil {
		return nil, fromStatus(err)
	}
	var out []StreamStateHandle
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fromStatus(err)
		}
		out = append(out, streamHandlesFromProto(r.Handles)...)
	}
}

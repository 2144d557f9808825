package sdk

import (
	"context"
	"fmt"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// localStateFactory returns the LocalStateFactory of location id; a location that does not
// implement it gets an error wrapping ErrUnsupported.
func (s *storageServer) localStateFactory(id uint64) (LocalStateFactory, error) {
	loc, err := s.location(id)
	if err != nil {
		return nil, err
	}
	f, ok := loc.(LocalStateFactory)
	if !ok {
		return nil, fmt.Errorf("checkpoint location %d does not create local state files: %w", id, ErrUnsupported)
	}
	return f, nil
}

// CreateLocalState serves LocalStateFactory.CreateLocalStateFile.
func (s *storageServer) CreateLocalState(ctx context.Context, req *pb.CreateLocalStateRequest) (*pb.CreateLocalStateResponse, error) {
	f, err := s.localStateFactory(req.LocationId)
	if err != nil {
		return nil, err
	}
	p, err := f.CreateLocalStateFile(ctx, scopeFromProto(req.Scope))
	if err != nil {
		return nil, err
	}
	return &pb.CreateLocalStateResponse{Path: p}, nil
}

// PublishLocalState serves LocalStateFactory.PublishLocalStateFile.
func (s *storageServer) PublishLocalState(ctx context.Context, req *pb.PublishLocalStateRequest) (*pb.StreamStateHandle, error) {
	f, err := s.localStateFactory(req.LocationId)
	if err != nil {
		return nil, err
	}
	h, err := f.PublishLocalStateFile(ctx, req.Path, scopeFromProto(req.Scope), req.Size, req.Checksum)
	if err != nil {
		return nil, err
	}
	return streamHandleToProto(h), nil
}

// DiscardLocalState serves LocalStateFactory.DiscardLocalStateFile.
func (s *storageServer) DiscardLocalState(ctx context.Context, req *pb.DiscardLocalStateRequest) (*pb.Empty, error) {
	f, err := s.localStateFactory(req.LocationId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, f.DiscardLocalStateFile(ctx, req.Path)
}

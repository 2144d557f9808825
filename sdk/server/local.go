package server

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// localStateFactory returns the LocalStateFactory of location id; a location that does not
// implement it gets an error wrapping ErrUnsupported.
func (s *storageServer) localStateFactory(id uint64) (sdk.LocalStateFactory, error) {
	loc, err := s.location(id)
	if err != nil {
		return nil, err
	}
	f, ok := loc.(sdk.LocalStateFactory)
	if !ok {
		return nil, fmt.Errorf("checkpoint location %d does not create local state files: %w", id, sdk.ErrUnsupported)
	}
	return f, nil
}

// CreateLocalState serves LocalStateFactory.CreateLocalStateFile.
func (s *storageServer) CreateLocalState(ctx context.Context, req *pb.CreateLocalStateRequest) (*pb.CreateLocalStateResponse, error) {
	f, err := s.localStateFactory(req.LocationId)
	if err != nil {
		return nil, err
	}
	p, err := f.CreateLocalStateFile(ctx, convert.ScopeFromProto(req.Scope))
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
	h, err := f.PublishLocalStateFile(ctx, req.Path, convert.ScopeFromProto(req.Scope), req.Size, req.Checksum)
	if err != nil {
		return nil, err
	}
	return convert.StreamHandleToProto(h), nil
}

// DiscardLocalState serves LocalStateFactory.DiscardLocalStateFile.
func (s *storageServer) DiscardLocalState(ctx context.Context, req *pb.DiscardLocalStateRequest) (*pb.Empty, error) {
	f, err := s.localStateFactory(req.LocationId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, f.DiscardLocalStateFile(ctx, req.Path)
}

// AdoptRemoteFiles serves RemoteFileAdopter; an access that does not implement it gets an
// error wrapping ErrUnsupported.
func (s *storageServer) AdoptRemoteFiles(ctx context.Context, req *pb.AdoptRemoteFilesRequest) (*pb.AdoptRemoteFilesResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	r, ok := a.(sdk.RemoteFileAdopter)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d does not adopt remote files: %w", req.AccessId, sdk.ErrUnsupported)
	}
	hs, err := r.AdoptRemoteFiles(ctx, convert.StreamHandlesFromProto(req.Files))
	if err != nil {
		return nil, err
	}
	return &pb.AdoptRemoteFilesResponse{Handles: convert.StreamHandlesToProto(hs)}, nil
}

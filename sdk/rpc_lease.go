package sdk

import (
	"context"
	"fmt"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// leaseStore returns the LeaseStore of access id; an access that does not implement it
// gets an error wrapping ErrUnsupported.
func (s *storageServer) leaseStore(id uint64) (LeaseStore, error) {
	a, err := s.access(id)
	if err != nil {
		return nil, err
	}
	l, ok := a.(LeaseStore)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d does not store a lease: %w", id, ErrUnsupported)
	}
	return l, nil
}

// ReadLease serves LeaseStore.ReadLease.
func (s *storageServer) ReadLease(ctx context.Context, req *pb.AccessRequest) (*pb.LeaseRecord, error) {
	l, err := s.leaseStore(req.AccessId)
	if err != nil {
		return nil, err
	}
	r, err := l.ReadLease(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.LeaseRecord{Data: r.Data, Version: r.Version}, nil
}

// WriteLease serves LeaseStore.WriteLease; records above MaxLeaseSize are refused here,
// so no plugin sees one.
func (s *storageServer) WriteLease(ctx context.Context, req *pb.WriteLeaseRequest) (*pb.WriteLeaseResponse, error) {
	l, err := s.leaseStore(req.AccessId)
	if err != nil {
		return nil, err
	}
	if len(req.Data) > MaxLeaseSize {
		return nil, fmt.Errorf("lease record of %d bytes exceeds %d: %w", len(req.Data), MaxLeaseSize, ErrInvalidArgument)
	}
	v, err := l.WriteLease(ctx, req.Data, req.IfVersion)
	if err != nil {
		return nil, err
	}
	return &pb.WriteLeaseResponse{Version: v}, nil
}

// leaseStoreClient is the LeaseStore of an accessClient whose plugin access implements it
// (see withOptionalInterfaces).
type leaseStoreClient struct {
	a *accessClient
}

var _ LeaseStore = leaseStoreClient{}

// ReadLease implements LeaseStore over the ReadLease RPC.
func (l leaseStoreClient) ReadLease(ctx context.Context) (LeaseRecord, error) {
	r, err := l.a.c.ReadLease(ctx, &pb.AccessRequest{AccessId: l.a.id})
	if err != nil {
		return LeaseRecord{}, fromStatus(err)
	}
	return LeaseRecord{Data: r.Data, Version: r.Version}, nil
}

// WriteLease implements LeaseStore over the WriteLease RPC.
func (l leaseStoreClient) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	r, err := l.a.c.WriteLease(ctx, &pb.WriteLeaseRequest{AccessId: l.a.id, Data: data, IfVersion: ifVersion})
	if err != nil {
		return "", fromStatus(err)
	}
	return r.Version, nil
}

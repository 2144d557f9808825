package server

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// storageServer serves a CheckpointStorage; its accesses and locations live in tables. A
// location leaves its table when its metadata is finalized, when it is disposed, or when
// its access closes.
type storageServer struct {
	pb.UnimplementedCheckpointStorageServer
	impl      sdk.CheckpointStorage
	accesses  wire.Table[sdk.CheckpointStorageAccess]
	locations wire.Table[*serverLocation]
}

type serverLocation struct {
	access uint64
	loc    sdk.CheckpointStorageLocation
}

func (s *storageServer) access(id uint64) (sdk.CheckpointStorageAccess, error) {
	a, ok := s.accesses.Get(id)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d: %w (closed or never created)", id, sdk.ErrNotFound)
	}
	return a, nil
}

func (s *storageServer) location(id uint64) (sdk.CheckpointStorageLocation, error) {
	l, ok := s.locations.Get(id)
	if !ok {
		return nil, fmt.Errorf("checkpoint location %d: %w (finalized, disposed or never created)", id, sdk.ErrNotFound)
	}
	return l.loc, nil
}

func (s *storageServer) ResolveCheckpoint(ctx context.Context, req *pb.ResolveCheckpointRequest) (*pb.CompletedLocation, error) {
	c, err := s.impl.ResolveCheckpoint(ctx, req.ExternalPointer)
	if err != nil {
		return nil, err
	}
	return convert.CompletedToProto(c), nil
}

func (s *storageServer) CreateAccess(ctx context.Context, req *pb.CreateAccessRequest) (*pb.CreateAccessResponse, error) {
	a, err := s.impl.CreateCheckpointStorage(ctx, req.JobId)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("CreateCheckpointStorage returned no access and no error")
	}
	r := &pb.CreateAccessResponse{
		AccessId:                       s.accesses.Add(a),
		SupportsHighlyAvailableStorage: a.SupportsHighlyAvailableStorage(),
		HasDefaultSavepointLocation:    a.HasDefaultSavepointLocation(),
	}
	if wire.Announced.AccessInterfaces {
		_, r.ListsSharedState = a.(sdk.SharedStateLister)
		_, r.LocatesLocalState = a.(sdk.LocalStateLocator)
		_, r.StoresLease = a.(sdk.LeaseStore)
	}
	if wire.Announced.RemoteFiles {
		_, r.AdoptsRemoteFiles = a.(sdk.RemoteFileAdopter)
	}
	return r, nil
}

func (s *storageServer) InitializeBaseLocations(ctx context.Context, req *pb.AccessRequest) (*pb.Empty, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, a.InitializeBaseLocationsForCheckpoint(ctx)
}

func (s *storageServer) addLocation(access uint64, loc sdk.CheckpointStorageLocation, err error) (*pb.LocationResponse, error) {
	if err != nil {
		return nil, err
	}
	if loc == nil {
		return nil, fmt.Errorf("checkpoint storage access %d returned no location and no error", access)
	}
	id := s.locations.Add(&serverLocation{access: access, loc: loc})
	r := &pb.LocationResponse{LocationId: id, Reference: loc.LocationReference()}
	if wire.Announced.LocalWrites {
		_, r.LocalStateFiles = loc.(sdk.LocalStateFactory)
	}
	return r, nil
}

func (s *storageServer) InitializeCheckpointLocation(ctx context.Context, req *pb.InitializeCheckpointLocationRequest) (*pb.LocationResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	loc, err := a.InitializeLocationForCheckpoint(ctx, req.CheckpointId)
	return s.addLocation(req.AccessId, loc, err)
}

func (s *storageServer) InitializeSavepointLocation(ctx context.Context, req *pb.InitializeSavepointLocationRequest) (*pb.LocationResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	loc, err := a.InitializeLocationForSavepoint(ctx, req.CheckpointId, req.Target)
	return s.addLocation(req.AccessId, loc, err)
}

func (s *storageServer) ListCompletedCheckpoints(ctx context.Context, req *pb.AccessRequest) (*pb.ListCompletedCheckpointsResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	cs, err := a.ListCompletedCheckpoints(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.ListCompletedCheckpointsResponse{Locations: convert.CompletedLocationsToProto(cs)}, nil
}

// OpenState sends a first chunk once the handle is open, so that the host sees an open
// error as the error of OpenState.
func (s *storageServer) OpenState(req *pb.OpenStateRequest, st pb.CheckpointStorage_OpenStateServer) error {
	a, err := s.access(req.AccessId)
	if err != nil {
		return err
	}
	rc, err := a.OpenState(st.Context(), convert.StreamHandleFromProto(req.Handle))
	if err != nil {
		return err
	}
	defer rc.Close()
	buf := make([]byte, wire.ChunkSize)
	for first := true; ; first = false {
		n, err := io.ReadFull(rc, buf)
		end := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !end {
			return err
		}
		if n > 0 || first {
			if err := st.Send(&pb.Chunk{Data: buf[:n]}); err != nil {
				return err
			}
		}
		if end {
			return nil
		}
	}
}

func (s *storageServer) DiscardState(ctx context.Context, req *pb.DiscardStateRequest) (*pb.Empty, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, a.DiscardState(ctx, convert.StreamHandlesFromProto(req.Handles))
}

func (s *storageServer) DisposeCheckpoint(ctx context.Context, req *pb.DisposeCheckpointRequest) (*pb.Empty, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, a.DisposeCheckpoint(ctx, convert.CompletedFromProto(req.Location))
}

func (s *storageServer) CloseAccess(_ context.Context, req *pb.AccessRequest) (*pb.Empty, error) {
	a, ok := s.accesses.Remove(req.AccessId)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d: %w (already closed)", req.AccessId, sdk.ErrNotFound)
	}
	s.locations.RemoveIf(func(l *serverLocation) bool { return l.access == req.AccessId })
	return &pb.Empty{}, a.Close()
}

func (s *storageServer) DisposeOnFailure(ctx context.Context, req *pb.LocationRequest) (*pb.Empty, error) {
	loc, err := s.location(req.LocationId)
	if err != nil {
		return nil, err
	}
	if err := loc.DisposeOnFailure(ctx); err != nil {
		return nil, err
	}
	s.locations.Remove(req.LocationId)
	return &pb.Empty{}, nil
}

// WriteState receives a state stream: kept when the host half-closes, discarded when the
// host cancels (or anything fails).
func (s *storageServer) WriteState(st pb.CheckpointStorage_WriteStateServer) error {
	open, err := receiveFirst(st.Recv, func(m *pb.WriteStateMessage) (*pb.WriteStateOpen, bool) { return m.GetOpen(), m.GetOpen() != nil }, "state stream", "an open")
	if err != nil {
		return err
	}
	loc, err := s.location(open.LocationId)
	if err != nil {
		return err
	}
	out, err := loc.CreateCheckpointStateOutputStream(st.Context(), convert.ScopeFromProto(open.Scope))
	if err != nil {
		return err
	}
	if err := receiveChunks(st.Recv, func(m *pb.WriteStateMessage) []byte { return m.GetChunk() }, out); err != nil {
		_ = out.Close()
		return err
	}
	h, err := out.CloseAndGetHandle(st.Context())
	if err != nil {
		_ = out.Close()
		return err
	}
	return st.SendAndClose(convert.StreamHandleToProto(h))
}

// WriteMetadata receives a checkpoint's metadata: finalized when the host half-closes,
// discarded when the host cancels (or anything fails).
func (s *storageServer) WriteMetadata(st pb.CheckpointStorage_WriteMetadataServer) error {
	lx, err := receiveFirst(st.Recv, func(m *pb.WriteMetadataMessage) (*pb.WriteMetadataMessage_LocationId, bool) {
		lx, ok := m.Msg.(*pb.WriteMetadataMessage_LocationId)
		return lx, ok
	}, "metadata stream", "an open")
	if err != nil {
		return err
	}
	loc, err := s.location(lx.LocationId)
	if err != nil {
		return err
	}
	out, err := loc.CreateMetadataOutputStream(st.Context())
	if err != nil {
		return err
	}
	if err := receiveChunks(st.Recv, func(m *pb.WriteMetadataMessage) []byte { return m.GetChunk() }, out); err != nil {
		_ = out.Close()
		return err
	}
	c, err := out.CloseAndFinalize(st.Context())
	if err != nil {
		_ = out.Close()
		return err
	}
	s.locations.Remove(lx.LocationId)
	return st.SendAndClose(convert.CompletedToProto(c))
}

// receiveChunks writes the chunks of a client stream to w until the client half-closes.
func receiveChunks[M any](recv func() (M, error), chunk func(M) []byte, w io.Writer) error {
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(chunk(m)); err != nil {
			return err
		}
	}
}

// ListSharedState serves SharedStateLister in batches of about wire.BatchBytes; an access
// that does not implement it gets an error wrapping ErrUnsupported.
func (s *storageServer) ListSharedState(req *pb.AccessRequest, st pb.CheckpointStorage_ListSharedStateServer) error {
	a, err := s.access(req.AccessId)
	if err != nil {
		return err
	}
	l, ok := a.(sdk.SharedStateLister)
	if !ok {
		return fmt.Errorf("checkpoint storage access %d does not list shared state: %w", req.AccessId, sdk.ErrUnsupported)
	}
	hs, err := l.ListSharedState(st.Context())
	if err != nil {
		return err
	}
	for len(hs) > 0 {
		n := wire.BatchEnd(hs, func(h sdk.StreamStateHandle) int { return len(h.Ref) + len(h.Inline) + 24 })
		if err := st.Send(&pb.ListSharedStateResponse{Handles: convert.StreamHandlesToProto(hs[:n])}); err != nil {
			return err
		}
		hs = hs[n:]
	}
	return nil
}

// LocalStatePath serves LocalStateLocator; an access that does not implement it gets an
// error wrapping ErrUnsupported.
func (s *storageServer) LocalStatePath(ctx context.Context, req *pb.LocalStatePathRequest) (*pb.LocalStatePathResponse, error) {
	a, err := s.access(req.AccessId)
	if err != nil {
		return nil, err
	}
	l, ok := a.(sdk.LocalStateLocator)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d does not locate local state: %w", req.AccessId, sdk.ErrUnsupported)
	}
	p, err := l.LocalStatePath(ctx, convert.StreamHandleFromProto(req.Handle))
	if err != nil {
		return nil, err
	}
	return &pb.LocalStatePathResponse{Path: p}, nil
}

// leaseStore returns the LeaseStore of access id; an access that does not implement it
// gets an error wrapping ErrUnsupported.
func (s *storageServer) leaseStore(id uint64) (sdk.LeaseStore, error) {
	a, err := s.access(id)
	if err != nil {
		return nil, err
	}
	l, ok := a.(sdk.LeaseStore)
	if !ok {
		return nil, fmt.Errorf("checkpoint storage access %d does not store a lease: %w", id, sdk.ErrUnsupported)
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
	return convert.LeaseToProto(r), nil
}

// WriteLease serves LeaseStore.WriteLease; records above MaxLeaseSize are refused here,
// so no plugin sees one.
func (s *storageServer) WriteLease(ctx context.Context, req *pb.WriteLeaseRequest) (*pb.WriteLeaseResponse, error) {
	l, err := s.leaseStore(req.AccessId)
	if err != nil {
		return nil, err
	}
	if len(req.Data) > sdk.MaxLeaseSize {
		return nil, fmt.Errorf("lease record of %d bytes exceeds %d: %w", len(req.Data), sdk.MaxLeaseSize, sdk.ErrInvalidArgument)
	}
	v, err := l.WriteLease(ctx, req.Data, req.IfVersion)
	if err != nil {
		return nil, err
	}
	return &pb.WriteLeaseResponse{Version: v}, nil
}

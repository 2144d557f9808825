package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
	"github.com/flowstate/flowstate/sdk/optional"
)

// storageClient is an sdk.CheckpointStorage served by a plugin process.
type storageClient struct {
	rpc        *Remote
	pluginInfo sdk.PluginInfo
}

func (s *storageClient) PluginInfo() sdk.PluginInfo { return s.pluginInfo }

func (s *storageClient) Configure(ctx context.Context, opts sdk.Options) error {
	return s.rpc.Configure(ctx, opts)
}

func (s *storageClient) ResolveCheckpoint(ctx context.Context, externalPointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	r, err := s.rpc.storage.ResolveCheckpoint(ctx, &pb.ResolveCheckpointRequest{ExternalPointer: externalPointer})
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, convert.Errors.FromStatus(err)
	}
	return convert.CompletedFromProto(r), nil
}

func (s *storageClient) CreateCheckpointStorage(ctx context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	r, err := s.rpc.storage.CreateAccess(ctx, &pb.CreateAccessRequest{JobId: jobID})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	a := &accessClient{c: s.rpc.storage, done: s.rpc.done, id: r.AccessId, ha: r.SupportsHighlyAvailableStorage, defaultSavepoint: r.HasDefaultSavepointLocation, locates: r.LocatesLocalState}
	// The access always locates (LocalStatePath answers "" for a plugin access that does
	// not), and lists, leases and adopts exactly when the plugin's access does: a type
	// assertion on the result answers what it would answer on the plugin's access.
	with := optional.AccessInterfaces{Locator: a}
	if r.ListsSharedState {
		with.Lister = sharedListerClient{a}
	}
	if r.StoresLease {
		with.Lease = leaseStoreClient{a}
	}
	if r.AdoptsRemoteFiles {
		with.Adopter = adopterClient{a}
	}
	return optional.Access(a, with), nil
}

// accessClient is an sdk.CheckpointStorageAccess living in a plugin process under id. Its
// boolean properties, among them whether the plugin's access implements
// sdk.LocalStateLocator (locates), are read once, when it is created.
type accessClient struct {
	c                pb.CheckpointStorageClient
	done             <-chan struct{} // closed when the plugin process has exited
	id               uint64
	ha               bool
	defaultSavepoint bool
	locates          bool
}

func (a *accessClient) SupportsHighlyAvailableStorage() bool { return a.ha }

func (a *accessClient) HasDefaultSavepointLocation() bool { return a.defaultSavepoint }

func (a *accessClient) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
	_, err := a.c.InitializeBaseLocations(ctx, &pb.AccessRequest{AccessId: a.id})
	return convert.Errors.FromStatus(err)
}

func (a *accessClient) InitializeLocationForCheckpoint(ctx context.Context, checkpointID int64) (sdk.CheckpointStorageLocation, error) {
	r, err := a.c.InitializeCheckpointLocation(ctx, &pb.InitializeCheckpointLocationRequest{AccessId: a.id, CheckpointId: checkpointID})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return newLocationClient(a.c, r), nil
}

func (a *accessClient) InitializeLocationForSavepoint(ctx context.Context, checkpointID int64, target string) (sdk.CheckpointStorageLocation, error) {
	r, err := a.c.InitializeSavepointLocation(ctx, &pb.InitializeSavepointLocationRequest{AccessId: a.id, CheckpointId: checkpointID, Target: target})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return newLocationClient(a.c, r), nil
}

func (a *accessClient) ListCompletedCheckpoints(ctx context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	r, err := a.c.ListCompletedCheckpoints(ctx, &pb.AccessRequest{AccessId: a.id})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return convert.CompletedLocationsFromProto(r.Locations), nil
}

// OpenState returns the bytes of h as the plugin streams them; an error opening h is
// returned here, not by the first Read.
func (a *accessClient) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := a.c.OpenState(ctx, &pb.OpenStateRequest{AccessId: a.id, Handle: convert.StreamHandleToProto(h)})
	if err != nil {
		cancel()
		return nil, convert.Errors.FromStatus(err)
	}
	first, err := st.Recv()
	if err != nil {
		cancel()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("opening state %q: the plugin sent nothing", h.Ref)
		}
		return nil, convert.Errors.FromStatus(err)
	}
	return &stateReaderClient{st: st, cancel: cancel, buf: first.Data}, nil
}

func (a *accessClient) DiscardState(ctx context.Context, handles []sdk.StreamStateHandle) error {
	for len(handles) > 0 {
		n := wire.BatchEnd(handles, func(h sdk.StreamStateHandle) int { return len(h.Ref) + len(h.Inline) + 24 })
		if _, err := a.c.DiscardState(ctx, &pb.DiscardStateRequest{AccessId: a.id, Handles: convert.StreamHandlesToProto(handles[:n])}); err != nil {
			return convert.Errors.FromStatus(err)
		}
		handles = handles[n:]
	}
	return nil
}

func (a *accessClient) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	_, err := a.c.DisposeCheckpoint(ctx, &pb.DisposeCheckpointRequest{AccessId: a.id, Location: convert.CompletedToProto(loc)})
	return convert.Errors.FromStatus(err)
}

func (a *accessClient) Close() error {
	ctx, cancel := closeContext(a.done)
	defer cancel()
	_, err := a.c.CloseAccess(ctx, &pb.AccessRequest{AccessId: a.id})
	return convert.Errors.FromStatus(err)
}

// stateReaderClient reads the chunks of an OpenState stream.
type stateReaderClient struct {
	st     grpc.ServerStreamingClient[pb.Chunk]
	cancel context.CancelFunc
	buf    []byte
	err    error
}

func (r *stateReaderClient) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		m, err := r.st.Recv()
		switch {
		case errors.Is(err, io.EOF):
			r.err = io.EOF
		case err != nil:
			r.err = convert.Errors.FromStatus(err)
		default:
			r.buf = m.Data
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *stateReaderClient) Close() error {
	r.cancel()
	if r.err == nil {
		r.err = errors.New("state reader is closed")
	}
	return nil
}

// locationClient is an sdk.CheckpointStorageLocation living in a plugin process under id.
type locationClient struct {
	c   pb.CheckpointStorageClient
	id  uint64
	ref string
}

func (l *locationClient) LocationReference() string { return l.ref }

func (l *locationClient) DisposeOnFailure(ctx context.Context) error {
	_, err := l.c.DisposeOnFailure(ctx, &pb.LocationRequest{LocationId: l.id})
	return convert.Errors.FromStatus(err)
}

// CreateCheckpointStateOutputStream opens a client stream to the plugin that lives as
// long as ctx; an error of the plugin opening it shows at the first Write or at
// CloseAndGetHandle.
func (l *locationClient) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := l.c.WriteState(ctx)
	if err != nil {
		cancel()
		return nil, convert.Errors.FromStatus(err)
	}
	out := &uploadStream[pb.WriteStateMessage, pb.StreamStateHandle]{st: st, cancel: cancel}
	out.w.Send = func(b []byte) error {
		return out.send(&pb.WriteStateMessage{Msg: &pb.WriteStateMessage_Chunk{Chunk: b}})
	}
	if err := out.send(&pb.WriteStateMessage{Msg: &pb.WriteStateMessage_Open{Open: &pb.WriteStateOpen{LocationId: l.id, Scope: convert.ScopeToProto(scope)}}}); err != nil {
		out.abort()
		return nil, err
	}
	return &stateOutClient{out}, nil
}

// CreateMetadataOutputStream opens a client stream to the plugin that lives as long as
// ctx; an error of the plugin opening it shows at the first Write or at CloseAndFinalize.
func (l *locationClient) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := l.c.WriteMetadata(ctx)
	if err != nil {
		cancel()
		return nil, convert.Errors.FromStatus(err)
	}
	out := &uploadStream[pb.WriteMetadataMessage, pb.CompletedLocation]{st: st, cancel: cancel}
	out.w.Send = func(b []byte) error {
		return out.send(&pb.WriteMetadataMessage{Msg: &pb.WriteMetadataMessage_Chunk{Chunk: b}})
	}
	if err := out.send(&pb.WriteMetadataMessage{Msg: &pb.WriteMetadataMessage_LocationId{LocationId: l.id}}); err != nil {
		out.abort()
		return nil, err
	}
	return &metadataOutClient{out}, nil
}

// uploadStream is the host side of a client stream of chunks: finishing it half-closes
// and receives the result; aborting it cancels the call, which makes the plugin discard
// what it received.
type uploadStream[Req, Res any] struct {
	st     grpc.ClientStreamingClient[Req, Res]
	cancel context.CancelFunc
	w      wire.ChunkWriter
	done   bool
	err    error
}

func (u *uploadStream[Req, Res]) send(m *Req) error {
	if u.err != nil {
		return u.err
	}
	err := u.st.Send(m)
	if errors.Is(err, io.EOF) {
		// The plugin ended the call: its status says why.
		_, rerr := u.st.CloseAndRecv()
		err = convert.Errors.FromStatus(rerr)
		if err == nil {
			err = errors.New("the plugin ended the stream early")
		}
	} else if err != nil {
		err = convert.Errors.FromStatus(err)
	}
	if err != nil {
		u.err = err
	}
	return err
}

func (u *uploadStream[Req, Res]) Write(p []byte) (int, error) {
	if u.done {
		return 0, errors.New("stream is closed")
	}
	if u.err != nil {
		return 0, u.err
	}
	return u.w.Write(p)
}

func (u *uploadStream[Req, Res]) finish(ctx context.Context) (*Res, error) {
	if u.done {
		return nil, errors.New("stream is closed")
	}
	if u.err != nil {
		u.abort()
		return nil, u.err
	}
	stop := context.AfterFunc(ctx, u.cancel)
	defer stop()
	if err := u.w.Flush(); err != nil {
		u.abort()
		return nil, err
	}
	u.done = true
	defer u.cancel()
	r, err := u.st.CloseAndRecv()
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return r, nil
}

func (u *uploadStream[Req, Res]) abort() {
	if !u.done {
		u.done = true
		u.cancel()
	}
}

// stateOutClient is an sdk.CheckpointStateOutputStream written to a plugin.
type stateOutClient struct {
	*uploadStream[pb.WriteStateMessage, pb.StreamStateHandle]
}

func (s *stateOutClient) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	h, err := s.finish(ctx)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	return convert.StreamHandleFromProto(h), nil
}

func (s *stateOutClient) Close() error {
	s.abort()
	return nil
}

// metadataOutClient is an sdk.MetadataOutputStream written to a plugin.
type metadataOutClient struct {
	*uploadStream[pb.WriteMetadataMessage, pb.CompletedLocation]
}

func (m *metadataOutClient) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	c, err := m.finish(ctx)
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	return convert.CompletedFromProto(c), nil
}

func (m *metadataOutClient) Close() error {
	m.abort()
	return nil
}

// sharedListerClient is the SharedStateLister of an accessClient whose plugin access
// implements it (see CreateCheckpointStorage).
type sharedListerClient struct {
	a *accessClient
}

// ListSharedState implements sdk.SharedStateLister over the ListSharedState RPC.
func (l sharedListerClient) ListSharedState(ctx context.Context) ([]sdk.StreamStateHandle, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := l.a.c.ListSharedState(ctx, &pb.AccessRequest{AccessId: l.a.id})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	var out []sdk.StreamStateHandle
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, convert.Errors.FromStatus(err)
		}
		out = append(out, convert.StreamHandlesFromProto(r.Handles)...)
	}
}

// leaseStoreClient is the LeaseStore of an accessClient whose plugin access implements it
// (see CreateCheckpointStorage).
type leaseStoreClient struct {
	a *accessClient
}

// ReadLease implements sdk.LeaseStore over the ReadLease RPC.
func (l leaseStoreClient) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	r, err := l.a.c.ReadLease(ctx, &pb.AccessRequest{AccessId: l.a.id})
	if err != nil {
		return sdk.LeaseRecord{}, convert.Errors.FromStatus(err)
	}
	return convert.LeaseFromProto(r), nil
}

// WriteLease implements sdk.LeaseStore over the WriteLease RPC.
func (l leaseStoreClient) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	r, err := l.a.c.WriteLease(ctx, &pb.WriteLeaseRequest{AccessId: l.a.id, Data: data, IfVersion: ifVersion})
	if err != nil {
		return "", convert.Errors.FromStatus(err)
	}
	return r.Version, nil
}

// LocalStatePath implements sdk.LocalStateLocator over the LocalStatePath RPC; it answers
// "" without a call when the plugin's access does not implement it.
func (a *accessClient) LocalStatePath(ctx context.Context, h sdk.StreamStateHandle) (string, error) {
	if !a.locates || h.Ref == "" {
		return "", nil
	}
	r, err := a.c.LocalStatePath(ctx, &pb.LocalStatePathRequest{AccessId: a.id, Handle: convert.StreamHandleToProto(h)})
	if err != nil {
		return "", convert.Errors.FromStatus(err)
	}
	return r.Path, nil
}

// adopterClient is the RemoteFileAdopter of an accessClient whose plugin access implements
// it (see CreateCheckpointStorage).
type adopterClient struct {
	a *accessClient
}

// AdoptRemoteFiles implements sdk.RemoteFileAdopter over the AdoptRemoteFiles RPC.
func (r adopterClient) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	res, err := r.a.c.AdoptRemoteFiles(ctx, &pb.AdoptRemoteFilesRequest{AccessId: r.a.id, Files: convert.StreamHandlesToProto(files)})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return adopted(files, convert.StreamHandlesFromProto(res.Handles))
}

// adopted checks the answer of an adoption: one handle per file.
func adopted(files, handles []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	if len(handles) != len(files) {
		return nil, fmt.Errorf("adopting %d remote files: %d handles came back: %w", len(files), len(handles), sdk.ErrCorrupt)
	}
	return handles, nil
}

var (
	_ sdk.RemoteFileAdopter = adopterClient{}
	_ sdk.SharedStateLister = sharedListerClient{}
	_ sdk.LeaseStore        = leaseStoreClient{}
	_ sdk.LocalStateLocator = (*accessClient)(nil)
)

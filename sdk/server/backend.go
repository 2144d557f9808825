package server

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	"github.com/flowstate/flowstate/sdk/internal/prio"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// backendServer serves a StateBackend; its keyed backends and snapshots live in tables.
type backendServer struct {
	pb.UnimplementedStateBackendServer
	impl      sdk.StateBackend
	backends  wire.Table[*servedKeyed]
	snapshots wire.Table[sdk.Snapshot]
}

// servedKeyed is a keyed backend being served. Its calls come from several RPCs at once (a
// Get while the Pipeline's writes are in flight), and mu keeps them one at a time, as
// KeyedStateBackend asks; a Get, which a subtask waits for, goes before queued writes.
type servedKeyed struct {
	kb sdk.KeyedStateBackend
	mu prio.Mutex
}

// call runs f on the keyed backend, alone; urgent lets it go before queued calls.
func (k *servedKeyed) call(urgent bool, f func(sdk.KeyedStateBackend) error) error {
	if urgent {
		k.mu.LockUrgent()
	} else {
		k.mu.Lock()
	}
	defer k.mu.Unlock()
	return f(k.kb)
}

func (s *backendServer) keyed(id uint64) (*servedKeyed, error) {
	k, ok := s.backends.Get(id)
	if !ok {
		return nil, fmt.Errorf("keyed backend %d: %w (closed or never created)", id, sdk.ErrNotFound)
	}
	return k, nil
}

func (s *backendServer) CreateKeyedBackend(ctx context.Context, req *pb.CreateKeyedBackendRequest) (*pb.CreateKeyedBackendResponse, error) {
	kb, err := s.impl.CreateKeyedStateBackend(ctx, convert.ParamsFromProto(req))
	if err != nil {
		return nil, err
	}
	if kb == nil {
		return nil, fmt.Errorf("CreateKeyedStateBackend returned no backend and no error")
	}
	id := s.backends.Add(&servedKeyed{kb: kb})
	return &pb.CreateKeyedBackendResponse{BackendId: id, Pipeline: wire.Announced.Pipeline, ReadsAhead: wire.Announced.ReadsAhead}, nil
}

func (s *backendServer) Get(ctx context.Context, req *pb.GetRequest) (resp *pb.GetResponse, err error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	err = k.call(true, func(kb sdk.KeyedStateBackend) error {
		resp, err = getOnPlugin(ctx, kb, req)
		return err
	})
	return resp, err
}

// getOnPlugin answers a GetRequest for a prefix of its keys whose values fit the batch
// size (at least one key).
func getOnPlugin(ctx context.Context, kb sdk.KeyedStateBackend, req *pb.GetRequest) (*pb.GetResponse, error) {
	values, err := kb.Get(ctx, req.Keys)
	if err != nil {
		return nil, err
	}
	if len(values) != len(req.Keys) {
		return nil, fmt.Errorf("keyed backend %d: Get returned %d values for %d keys", req.BackendId, len(values), len(req.Keys))
	}
	n := wire.BatchEnd(values, func(v []byte) int { return len(v) })
	resp := &pb.GetResponse{Values: values[:n]}
	for i, v := range values[:n] {
		if v == nil {
			resp.Absent = append(resp.Absent, uint32(i))
		}
	}
	return resp, nil
}

func (s *backendServer) Write(ctx context.Context, req *pb.WriteRequest) (*pb.Empty, error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, k.call(false, func(kb sdk.KeyedStateBackend) error {
		_, err := writeOnPlugin(ctx, kb, req, nil)
		return err
	})
}

// writeOnPlugin applies a WriteRequest. It builds the mutations in scratch's memory and
// returns that memory for the next request: a backend does not keep the slice it is passed,
// so a pipeline reuses one slice for all its writes instead of allocating thousands of
// mutations per request (garbage that made a plugin's GC a third of its CPU).
func writeOnPlugin(ctx context.Context, kb sdk.KeyedStateBackend, req *pb.WriteRequest, scratch []sdk.Mutation) ([]sdk.Mutation, error) {
	muts := scratch[:0]
	for _, m := range req.Mutations {
		muts = append(muts, sdk.Mutation{Key: m.Key, Value: m.Value, Delete: m.Delete})
	}
	muts, err := convert.UnpackMutations(req.Packed, muts)
	if err != nil {
		return muts, fmt.Errorf("keyed backend %d: write request: %w: %w", req.BackendId, err, sdk.ErrInvalidArgument)
	}
	err = kb.Write(ctx, muts)
	clear(muts) // keep no reference to the request's bytes
	return muts, err
}

func (s *backendServer) Scan(ctx context.Context, req *pb.ScanRequest) (*pb.ScanResponse, error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	var kvs []sdk.KV
	err = k.call(false, func(kb sdk.KeyedStateBackend) (err error) {
		kvs, err = kb.Scan(ctx, req.Start, req.End, int(req.Limit))
		return err
	})
	if err != nil {
		return nil, err
	}
	// A shorter page is fine: the caller reads on from the last key returned.
	n := wire.BatchEnd(kvs, func(kv sdk.KV) int { return len(kv.Key) + len(kv.Value) })
	pairs := make([]*pb.KV, n)
	for i, kv := range kvs[:n] {
		pairs[i] = &pb.KV{Key: kv.Key, Value: kv.Value}
	}
	return &pb.ScanResponse{Pairs: pairs}, nil
}

func (s *backendServer) Snapshot(ctx context.Context, req *pb.SnapshotRequest) (*pb.SnapshotResponse, error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	var snap sdk.Snapshot
	err = k.call(false, func(kb sdk.KeyedStateBackend) (err error) {
		snap, err = kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: req.CheckpointId, Savepoint: req.Savepoint, Full: req.Full})
		return err
	})
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, fmt.Errorf("keyed backend %d: sdk.Snapshot returned no snapshot and no error", req.BackendId)
	}
	return &pb.SnapshotResponse{SnapshotId: s.snapshots.Add(snap)}, nil
}

func (s *backendServer) SnapshotRelease(_ context.Context, req *pb.SnapshotReleaseRequest) (*pb.Empty, error) {
	snap, ok := s.snapshots.Remove(req.SnapshotId)
	if !ok {
		return nil, fmt.Errorf("snapshot %d: %w (already released)", req.SnapshotId, sdk.ErrNotFound)
	}
	snap.Release()
	return &pb.Empty{}, nil
}

func (s *backendServer) NotifyCheckpointComplete(ctx context.Context, req *pb.NotifyRequest) (*pb.Empty, error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, k.call(false, func(kb sdk.KeyedStateBackend) error { return kb.NotifyCheckpointComplete(ctx, req.CheckpointId) })
}

func (s *backendServer) NotifyCheckpointAborted(ctx context.Context, req *pb.NotifyRequest) (*pb.Empty, error) {
	k, err := s.keyed(req.BackendId)
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, k.call(false, func(kb sdk.KeyedStateBackend) error { return kb.NotifyCheckpointAborted(ctx, req.CheckpointId) })
}

func (s *backendServer) CloseKeyedBackend(_ context.Context, req *pb.BackendRequest) (*pb.Empty, error) {
	k, ok := s.backends.Remove(req.BackendId)
	if !ok {
		return nil, fmt.Errorf("keyed backend %d: %w (already closed)", req.BackendId, sdk.ErrNotFound)
	}
	return &pb.Empty{}, k.call(false, sdk.KeyedStateBackend.Close)
}

// Pipeline performs the writes and reads of one keyed backend in the order they arrive and
// answers each, in order (the host end is a host.PipelinedWriter).
func (s *backendServer) Pipeline(st pb.StateBackend_PipelineServer) error {
	var k *servedKeyed
	var failed *pb.Error
	var scratch []sdk.Mutation // reused by every write of the stream
	for {
		req, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if k == nil {
			if k, err = s.keyed(req.BackendId); err != nil {
				return err
			}
		}
		resp := &pb.PipelineResponse{Error: failed}
		if failed == nil {
			switch op := req.Op.(type) {
			case *pb.PipelineRequest_Write:
				err := k.call(false, func(kb sdk.KeyedStateBackend) (err error) {
					scratch, err = writeOnPlugin(st.Context(), kb, op.Write, scratch)
					return err
				})
				if err != nil {
					failed = convert.Errors.ToProto(err)
					resp.Error = failed
				}
			case *pb.PipelineRequest_Get:
				err := k.call(false, func(kb sdk.KeyedStateBackend) (err error) {
					resp.Get, err = getOnPlugin(st.Context(), kb, op.Get)
					return err
				})
				if err != nil {
					resp.Error = convert.Errors.ToProto(err) // a failed read changes no state
				}
			default:
				resp.Error = convert.Errors.ToProto(fmt.Errorf("pipeline: an empty request: %w", sdk.ErrInvalidArgument))
			}
		}
		if err := st.Send(resp); err != nil {
			return err
		}
	}
}

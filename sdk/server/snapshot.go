package server

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// SnapshotWrite runs Snapshot.Write in the plugin. The streams the snapshot writes to live
// on the host: see hostStreams.
func (s *backendServer) SnapshotWrite(st pb.StateBackend_SnapshotWriteServer) error {
	start, err := receiveFirst(st.Recv, func(m *pb.SnapshotWriteHostMessage) (*pb.SnapshotWriteStart, bool) {
		return m.GetStart(), m.GetStart() != nil
	}, "snapshot write", "a start")
	if err != nil {
		return err
	}
	snap, ok := s.snapshots.Get(start.SnapshotId)
	if !ok {
		return fmt.Errorf("snapshot %d: %w (released or never taken)", start.SnapshotId, sdk.ErrNotFound)
	}
	hs := &hostStreams{failed: map[uint64]error{}}
	hs.hostCalls = newHostCalls(st, hs.answerKey, "snapshot write")
	var streams sdk.CheckpointStreamFactory = hs
	if wire.Announced.RemoteFiles && start.AdoptsRemoteFiles {
		streams = adoptingHostStreams{hs}
	}
	handles, werr := snap.Write(st.Context(), streams)
	done := &pb.SnapshotWriteDone{Error: convert.Errors.ToProto(werr)}
	if werr == nil {
		done.Handles = convert.KeyedHandlesToProto(handles)
	}
	return hs.finish(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Done{Done: done}})
}

// hostStreams is the CheckpointStreamFactory a snapshot in the plugin writes to: each
// stream forwards its chunks to the host, which writes them to the host's own factory.
type hostStreams struct {
	*hostCalls[*pb.SnapshotWritePluginMessage, *pb.SnapshotWriteHostMessage]

	mu     sync.Mutex
	failed map[uint64]error // the streams the host failed, which answer no call
}

// answerKey says which stream a host's message answers; a failure answers no call but
// fails the stream's next chunk.
func (h *hostStreams) answerKey(m *pb.SnapshotWriteHostMessage) (uint64, bool) {
	switch x := m.Msg.(type) {
	case *pb.SnapshotWriteHostMessage_Opened:
		return x.Opened.StreamId, true
	case *pb.SnapshotWriteHostMessage_Closed:
		return x.Closed.StreamId, true
	case *pb.SnapshotWriteHostMessage_Adopted:
		return x.Adopted.RequestId, true
	case *pb.SnapshotWriteHostMessage_Failed:
		h.mu.Lock()
		h.failed[x.Failed.StreamId] = convert.Errors.FromProto(x.Failed.Error)
		h.mu.Unlock()
	}
	return 0, false
}

func (h *hostStreams) failure(id uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed[id]
}

// call sends m about stream id and waits for the host's answer.
func (h *hostStreams) call(ctx context.Context, id uint64, m *pb.SnapshotWritePluginMessage) (*pb.SnapshotWriteHostMessage, error) {
	call := h.answers.Expect(id)
	if err := h.send(m); err != nil {
		call.Forget()
		return nil, fmt.Errorf("state stream %d: %w", id, err)
	}
	r, err := call.Wait(ctx)
	if err != nil {
		call.Forget()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("state stream %d: %w", id, err)
	}
	return r, nil
}

// CreateCheckpointStateOutputStream opens a stream on the host. When the host answers
// with a local file (see LocalStateFactory), the stream writes the file itself; when it
// cannot open it, it gives the file back and opens a stream of chunks instead.
func (h *hostStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	id, local, err := h.open(ctx, scope, wire.Announced.LocalWrites)
	if err != nil {
		return nil, err
	}
	if local == "" {
		return h.chunkStream(id), nil
	}
	f, ferr := os.OpenFile(local, os.O_WRONLY|os.O_TRUNC, 0)
	if ferr == nil {
		return newLocalOutStream(h, id, f), nil
	}
	sdk.Logger().Debug("state file not writable here: writing it through the runner", "path", local, "error", ferr.Error())
	_ = h.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: &pb.CloseStream{StreamId: id}}})
	if id, _, err = h.open(ctx, scope, false); err != nil {
		return nil, err
	}
	return h.chunkStream(id), nil
}

// open opens a stream of scope on the host and returns its id and, when localOK and the
// host has one, the local file to write.
func (h *hostStreams) open(ctx context.Context, scope sdk.Scope, localOK bool) (uint64, string, error) {
	id := h.nextID.Add(1)
	r, err := h.call(ctx, id, &pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Open{Open: &pb.OpenStream{StreamId: id, Scope: convert.ScopeToProto(scope), LocalOk: localOK}}})
	if err != nil {
		return 0, "", err
	}
	if err := convert.Errors.FromProto(r.GetOpened().GetError()); err != nil {
		return 0, "", err
	}
	if !localOK {
		return id, "", nil
	}
	return id, r.GetOpened().GetLocalPath(), nil
}

// chunkStream returns the stream id whose bytes go to the host in chunks.
func (h *hostStreams) chunkStream(id uint64) *hostOutStream {
	out := &hostOutStream{h: h, id: id}
	out.w.Send = func(b []byte) error {
		if err := h.failure(id); err != nil {
			return err
		}
		return h.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Chunk{Chunk: &pb.StreamChunk{StreamId: id, Data: b}}})
	}
	return out
}

// closeStream ends stream id on the host with keep and waits for its handle.
func (h *hostStreams) closeStream(ctx context.Context, c *pb.CloseStream) (sdk.StreamStateHandle, error) {
	r, err := h.call(ctx, c.StreamId, &pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: c}})
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	closed := r.GetClosed()
	if err := convert.Errors.FromProto(closed.GetError()); err != nil {
		return sdk.StreamStateHandle{}, err
	}
	return convert.StreamHandleFromProto(closed.GetHandle()), nil
}

// hostOutStream is a state stream of the host, written by the plugin in chunks.
type hostOutStream struct {
	h      *hostStreams
	id     uint64
	w      wire.ChunkWriter
	closed bool
}

func (s *hostOutStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("state stream %d is closed", s.id)
	}
	return s.w.Write(p)
}

func (s *hostOutStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, fmt.Errorf("state stream %d is closed", s.id)
	}
	if err := s.w.Flush(); err != nil {
		_ = s.Close()
		return sdk.StreamStateHandle{}, err
	}
	s.closed = true
	return s.h.closeStream(ctx, &pb.CloseStream{StreamId: s.id, Keep: true})
}

func (s *hostOutStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	// The host discards the bytes; a broken stream discards them too.
	_ = s.h.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: &pb.CloseStream{StreamId: s.id}}})
	return nil
}

// adoptingHostStreams are the hostStreams of a host whose streams take over remote files
// (sdk.RemoteFileAdopter): the snapshot asks the host, which asks its checkpoint storage.
type adoptingHostStreams struct {
	*hostStreams
}

var _ sdk.RemoteFileAdopter = adoptingHostStreams{}

// AdoptRemoteFiles implements sdk.RemoteFileAdopter with an AdoptFiles message, answered
// by the host's FilesAdopted.
func (h adoptingHostStreams) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	id := h.nextID.Add(1)
	r, err := h.call(ctx, id, &pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Adopt{Adopt: &pb.AdoptFiles{RequestId: id, Files: convert.StreamHandlesToProto(files)}}})
	if err != nil {
		return nil, fmt.Errorf("adopt %d remote files: %w", len(files), err)
	}
	a := r.GetAdopted()
	if err := convert.Errors.FromProto(a.GetError()); err != nil {
		return nil, err
	}
	if len(a.GetHandles()) != len(files) {
		return nil, fmt.Errorf("adopt %d remote files: the host answered %d handles: %w", len(files), len(a.GetHandles()), sdk.ErrCorrupt)
	}
	return convert.StreamHandlesFromProto(a.GetHandles()), nil
}

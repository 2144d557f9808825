package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// SnapshotWrite runs Snapshot.Write in the plugin. The streams the snapshot writes to live
// on the host: see hostStreams.
func (s *backendServer) SnapshotWrite(st pb.StateBackend_SnapshotWriteServer) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return fmt.Errorf("snapshot write: the first message is not a start: %w", ErrInvalidArgument)
	}
	snap, ok := s.snapshots.Get(start.SnapshotId)
	if !ok {
		return fmt.Errorf("snapshot %d: %w (released or never taken)", start.SnapshotId, ErrNotFound)
	}
	hs := &hostStreams{st: st, waiting: map[uint64]chan *pb.SnapshotWriteHostMessage{}, failed: map[uint64]error{}, done: make(chan struct{})}
	go hs.receive()
	handles, werr := snap.Write(st.Context(), hs)
	done := &pb.SnapshotWriteDone{Error: wireErrors.ToProto(werr)}
	if werr == nil {
		done.Handles = keyedHandlesToProto(handles)
	}
	if err := hs.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Done{Done: done}}); err != nil {
		return err
	}
	<-hs.done // the host half-closes once it has the result
	return nil
}

// hostStreams is the CheckpointStreamFactory a snapshot in the plugin writes to: each
// stream forwards its chunks to the host, which writes them to the host's own factory.
type hostStreams struct {
	st     pb.StateBackend_SnapshotWriteServer
	sendMu sync.Mutex

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan *pb.SnapshotWriteHostMessage
	failed  map[uint64]error
	done    chan struct{} // closed when receive ends
	endErr  error
}

func (h *hostStreams) send(m *pb.SnapshotWritePluginMessage) error {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	return h.st.Send(m)
}

// receive dispatches the host's answers until the stream ends.
func (h *hostStreams) receive() {
	defer close(h.done)
	for {
		m, err := h.st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the host ended the snapshot write")
			}
			h.mu.Lock()
			h.endErr = err
			h.mu.Unlock()
			return
		}
		switch x := m.Msg.(type) {
		case *pb.SnapshotWriteHostMessage_Opened:
			h.deliver(x.Opened.StreamId, m)
		case *pb.SnapshotWriteHostMessage_Closed:
			h.deliver(x.Closed.StreamId, m)
		case *pb.SnapshotWriteHostMessage_Failed:
			h.mu.Lock()
			h.failed[x.Failed.StreamId] = wireErrors.FromProto(x.Failed.Error)
			h.mu.Unlock()
		}
	}
}

func (h *hostStreams) deliver(id uint64, m *pb.SnapshotWriteHostMessage) {
	h.mu.Lock()
	ch := h.waiting[id]
	delete(h.waiting, id)
	h.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

func (h *hostStreams) failure(id uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed[id]
}

// call sends m about stream id and waits for the host's answer.
func (h *hostStreams) call(ctx context.Context, id uint64, m *pb.SnapshotWritePluginMessage) (*pb.SnapshotWriteHostMessage, error) {
	ch := make(chan *pb.SnapshotWriteHostMessage, 1)
	h.mu.Lock()
	h.waiting[id] = ch
	h.mu.Unlock()
	forget := func() {
		h.mu.Lock()
		delete(h.waiting, id)
		h.mu.Unlock()
	}
	if err := h.send(m); err != nil {
		forget()
		return nil, fmt.Errorf("state stream %d: %w", id, err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-h.done:
		select {
		case r := <-ch:
			return r, nil
		default:
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return nil, fmt.Errorf("state stream %d: %w", id, h.endErr)
	}
}

// CreateCheckpointStateOutputStream opens a stream on the host. When the host answers
// with a local file (see LocalStateFactory), the stream writes the file itself; when it
// cannot open it, it gives the file back and opens a stream of chunks instead.
func (h *hostStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope Scope) (CheckpointStateOutputStream, error) {
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
	Logger().Debug("state file not writable here: writing it through the runner", "path", local, "error", ferr.Error())
	_ = h.send(&pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: &pb.CloseStream{StreamId: id}}})
	if id, _, err = h.open(ctx, scope, false); err != nil {
		return nil, err
	}
	return h.chunkStream(id), nil
}

// open opens a stream of scope on the host and returns its id and, when localOK and the
// host has one, the local file to write.
func (h *hostStreams) open(ctx context.Context, scope Scope, localOK bool) (uint64, string, error) {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	r, err := h.call(ctx, id, &pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Open{Open: &pb.OpenStream{StreamId: id, Scope: scopeToProto(scope), LocalOk: localOK}}})
	if err != nil {
		return 0, "", err
	}
	if err := wireErrors.FromProto(r.GetOpened().GetError()); err != nil {
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
func (h *hostStreams) closeStream(ctx context.Context, c *pb.CloseStream) (StreamStateHandle, error) {
	r, err := h.call(ctx, c.StreamId, &pb.SnapshotWritePluginMessage{Msg: &pb.SnapshotWritePluginMessage_Close{Close: c}})
	if err != nil {
		return StreamStateHandle{}, err
	}
	closed := r.GetClosed()
	if err := wireErrors.FromProto(closed.GetError()); err != nil {
		return StreamStateHandle{}, err
	}
	return streamHandleFromProto(closed.GetHandle()), nil
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

func (s *hostOutStream) CloseAndGetHandle(ctx context.Context) (StreamStateHandle, error) {
	if s.closed {
		return StreamStateHandle{}, fmt.Errorf("state stream %d is closed", s.id)
	}
	if err := s.w.Flush(); err != nil {
		_ = s.Close()
		return StreamStateHandle{}, err
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

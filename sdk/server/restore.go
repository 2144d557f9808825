package server

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	"github.com/flowstate/flowstate/sdk/internal/demux"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Restore runs KeyedStateBackend.Restore in the plugin. The bytes of the handles live on
// the host: see hostReader.
func (s *backendServer) Restore(st pb.StateBackend_RestoreServer) error {
	start, err := receiveFirst(st.Recv, func(m *pb.RestoreHostMessage) (*pb.RestoreStart, bool) { return m.GetStart(), m.GetStart() != nil }, "restore", "a start")
	if err != nil {
		return err
	}
	k, err := s.keyed(start.BackendId)
	if err != nil {
		return err
	}
	hr := &hostReader{newHostCalls(st, restoreAnswerKey, "restore")}
	rerr := k.call(false, func(kb sdk.KeyedStateBackend) error {
		return kb.Restore(st.Context(), convert.KeyedHandlesFromProto(start.Handles), hr)
	})
	return hr.finish(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Done{Done: &pb.RestoreDone{Error: convert.Errors.ToProto(rerr)}}})
}

// restoreAnswerKey says which read a host's message answers: its opening first, then its
// chunk requests in the order sent.
func restoreAnswerKey(m *pb.RestoreHostMessage) (uint64, bool) {
	switch x := m.Msg.(type) {
	case *pb.RestoreHostMessage_Opened:
		return x.Opened.ReadId, true
	case *pb.RestoreHostMessage_Data:
		return x.Data.ReadId, true
	}
	return 0, false
}

// hostReader is the StateReader of a restore in the plugin: it pulls the bytes of each
// handle from the host one chunk at a time, so concurrent readers never block each other.
type hostReader struct {
	*hostCalls[*pb.RestorePluginMessage, *pb.RestoreHostMessage]
}

// Open asks the host to open h. When the host answers with a local file, the plugin reads
// the file itself, verified against h (see sdk.LocalStateLocator); when it cannot open it,
// it asks again for the bytes through the host.
func (h *hostReader) Open(ctx context.Context, handle sdk.StreamStateHandle) (io.ReadCloser, error) {
	r, err := h.open(ctx, handle, wire.Announced.LocalReads)
	if err != nil || r.local == "" {
		return r.reader, err
	}
	f, ferr := os.Open(r.local)
	if ferr == nil {
		return wire.VerifyingReader(f, wire.Expect{Ref: handle.Ref, Size: handle.Size, Checksum: handle.Checksum}, sdk.ErrCorrupt), nil
	}
	sdk.Logger().Debug("state file not readable here: reading it through the runner", "state", handle.Ref, "path", r.local, "error", ferr.Error())
	r, err = h.open(ctx, handle, false)
	return r.reader, err
}

// opened is the host's answer to an OpenRead: a reader of the bytes through the host, or a
// local file to read.
type opened struct {
	reader io.ReadCloser
	local  string
}

func (h *hostReader) open(ctx context.Context, handle sdk.StreamStateHandle, localOK bool) (opened, error) {
	id := h.nextID.Add(1)
	call := h.answers.Expect(id)
	if err := h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Open{Open: &pb.OpenRead{ReadId: id, Handle: convert.StreamHandleToProto(handle), LocalOk: localOK}}}); err != nil {
		call.Forget()
		return opened{}, fmt.Errorf("opening state %q: %w", handle.Ref, err)
	}
	m, err := call.Wait(ctx)
	if err != nil {
		call.Forget()
		if ctx.Err() != nil {
			return opened{}, err
		}
		return opened{}, fmt.Errorf("opening state %q: %w", handle.Ref, err)
	}
	r := m.GetOpened()
	if err := convert.Errors.FromProto(r.GetError()); err != nil {
		return opened{}, err
	}
	if r.GetLocalPath() != "" && localOK {
		return opened{local: r.LocalPath}, nil
	}
	return opened{reader: &remoteReader{h: h, id: id}}, nil
}

// request asks the host for the next chunk of read id.
func (h *hostReader) request(id uint64) (demux.Call[*pb.RestoreHostMessage], error) {
	call := h.answers.Expect(id)
	if err := h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Next{Next: &pb.ReadNext{ReadId: id}}}); err != nil {
		call.Forget()
		return call, err
	}
	return call, nil
}

// requestsAhead is how many chunk requests a reader keeps in flight, so the round trips to
// the host overlap the backend's work on the chunks already here.
const requestsAhead = 4

// remoteReader reads one handle's bytes from the host, requestsAhead requests ahead of its
// reader.
type remoteReader struct {
	h       *hostReader
	id      uint64
	buf     []byte
	eof     bool
	err     error
	pending []demux.Call[*pb.RestoreHostMessage] // requests in flight, oldest first
	closed  bool
}

func (r *remoteReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, fmt.Errorf("state read %d is closed", r.id)
	}
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.eof {
			return 0, io.EOF
		}
		r.fetch()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// fetch waits for the next chunk and keeps requestsAhead requests in flight.
func (r *remoteReader) fetch() {
	for len(r.pending) < requestsAhead {
		ch, err := r.h.request(r.id)
		if err != nil {
			if len(r.pending) == 0 {
				r.err = err
				return
			}
			break
		}
		r.pending = append(r.pending, ch)
	}
	next := r.pending[0]
	r.pending = r.pending[1:]
	m, err := next.Wait(context.Background())
	if err != nil {
		r.err = fmt.Errorf("state read %d: %w", r.id, err)
		return
	}
	d := m.GetData()
	r.buf, r.eof, r.err = d.GetData(), d.GetEof(), convert.Errors.FromProto(d.GetError())
}

func (r *remoteReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	_ = r.h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Close{Close: &pb.CloseRead{ReadId: r.id}}})
	return nil
}

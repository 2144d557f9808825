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

// Restore runs KeyedStateBackend.Restore in the plugin. The bytes of the handles live on
// the host: see hostReader.
func (s *backendServer) Restore(st pb.StateBackend_RestoreServer) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return fmt.Errorf("restore: the first message is not a start: %w", ErrInvalidArgument)
	}
	k, err := s.keyed(start.BackendId)
	if err != nil {
		return err
	}
	hr := &hostReader{st: st, waiting: map[uint64][]chan *pb.ReadData{}, opening: map[uint64]chan *pb.ReadOpened{}, done: make(chan struct{})}
	go hr.receive()
	rerr := k.call(false, func(kb KeyedStateBackend) error {
		return kb.Restore(st.Context(), keyedHandlesFromProto(start.Handles), hr)
	})
	if err := hr.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Done{Done: &pb.RestoreDone{Error: wireErrors.ToProto(rerr)}}}); err != nil {
		return err
	}
	<-hr.done // the host half-closes once it has the result
	return nil
}

// hostReader is the StateReader of a restore in the plugin: it pulls the bytes of each
// handle from the host one chunk at a time, so concurrent readers never block each other.
type hostReader struct {
	st     pb.StateBackend_RestoreServer
	sendMu sync.Mutex

	mu      sync.Mutex
	nextID  uint64
	opening map[uint64]chan *pb.ReadOpened
	waiting map[uint64][]chan *pb.ReadData // per read, the requests in the order sent
	done    chan struct{}                  // closed when receive ends
	endErr  error
}

func (h *hostReader) send(m *pb.RestorePluginMessage) error {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	return h.st.Send(m)
}

// receive dispatches the host's answers until the stream ends.
func (h *hostReader) receive() {
	defer close(h.done)
	for {
		m, err := h.st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the host ended the restore")
			}
			h.mu.Lock()
			h.endErr = err
			h.mu.Unlock()
			return
		}
		switch x := m.Msg.(type) {
		case *pb.RestoreHostMessage_Opened:
			h.mu.Lock()
			ch := h.opening[x.Opened.ReadId]
			delete(h.opening, x.Opened.ReadId)
			h.mu.Unlock()
			if ch != nil {
				ch <- x.Opened
			}
		case *pb.RestoreHostMessage_Data:
			// The host answers a read's requests in order.
			h.mu.Lock()
			var ch chan *pb.ReadData
			if q := h.waiting[x.Data.ReadId]; len(q) > 0 {
				ch = q[0]
				if len(q) == 1 {
					delete(h.waiting, x.Data.ReadId)
				} else {
					h.waiting[x.Data.ReadId] = q[1:]
				}
			}
			h.mu.Unlock()
			if ch != nil {
				ch <- x.Data
			}
		}
	}
}

func (h *hostReader) ended() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endErr
}

// Open asks the host to open h. When the host answers with a local file, the plugin reads
// the file itself, verified against h (see LocalStateLocator); when it cannot open it, it
// asks again for the bytes through the host.
func (h *hostReader) Open(ctx context.Context, handle StreamStateHandle) (io.ReadCloser, error) {
	r, err := h.open(ctx, handle, wire.Announced.LocalReads)
	if err != nil || r.local == "" {
		return r.reader, err
	}
	f, ferr := os.Open(r.local)
	if ferr == nil {
		return wire.VerifyingReader(f, wire.Expect{Ref: handle.Ref, Size: handle.Size, Checksum: handle.Checksum}, ErrCorrupt), nil
	}
	Logger().Debug("state file not readable here: reading it through the runner", "state", handle.Ref, "path", r.local, "error", ferr.Error())
	r, err = h.open(ctx, handle, false)
	return r.reader, err
}

// opened is the host's answer to an OpenRead: a reader of the bytes through the host, or a
// local file to read.
type opened struct {
	reader io.ReadCloser
	local  string
}

func (h *hostReader) open(ctx context.Context, handle StreamStateHandle, localOK bool) (opened, error) {
	ch := make(chan *pb.ReadOpened, 1)
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.opening[id] = ch
	h.mu.Unlock()
	forget := func() {
		h.mu.Lock()
		delete(h.opening, id)
		h.mu.Unlock()
	}
	if err := h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Open{Open: &pb.OpenRead{ReadId: id, Handle: streamHandleToProto(handle), LocalOk: localOK}}}); err != nil {
		forget()
		return opened{}, fmt.Errorf("opening state %q: %w", handle.Ref, err)
	}
	select {
	case r := <-ch:
		if err := wireErrors.FromProto(r.Error); err != nil {
			return opened{}, err
		}
		if r.LocalPath != "" && localOK {
			return opened{local: r.LocalPath}, nil
		}
		return opened{reader: &remoteReader{h: h, id: id}}, nil
	case <-ctx.Done():
		forget()
		return opened{}, ctx.Err()
	case <-h.done:
		forget()
		return opened{}, fmt.Errorf("opening state %q: %w", handle.Ref, h.ended())
	}
}

// request asks the host for the next chunk of read id.
func (h *hostReader) request(id uint64) (chan *pb.ReadData, error) {
	ch := make(chan *pb.ReadData, 1)
	h.mu.Lock()
	h.waiting[id] = append(h.waiting[id], ch)
	h.mu.Unlock()
	if err := h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Next{Next: &pb.ReadNext{ReadId: id}}}); err != nil {
		h.mu.Lock()
		if q := h.waiting[id]; len(q) > 0 {
			h.waiting[id] = q[:len(q)-1]
		}
		h.mu.Unlock()
		return nil, err
	}
	return ch, nil
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
	pending []chan *pb.ReadData // requests in flight, oldest first
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
	select {
	case d := <-next:
		r.buf, r.eof, r.err = d.Data, d.Eof, wireErrors.FromProto(d.Error)
	case <-r.h.done:
		select {
		case d := <-next:
			r.buf, r.eof, r.err = d.Data, d.Eof, wireErrors.FromProto(d.Error)
		default:
			r.err = fmt.Errorf("state read %d: %w", r.id, r.h.ended())
		}
	}
}

func (r *remoteReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	_ = r.h.send(&pb.RestorePluginMessage{Msg: &pb.RestorePluginMessage_Close{Close: &pb.CloseRead{ReadId: r.id}}})
	return nil
}

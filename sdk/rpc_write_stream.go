package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// WriteStream serves PipelinedWriter: it applies the writes of one keyed backend in the
// order they arrive and acknowledges each, in order.
func (s *backendServer) WriteStream(st pb.StateBackend_WriteStreamServer) error {
	var kb KeyedStateBackend
	var failed *pb.Error
	for {
		req, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if kb == nil {
			if kb, err = s.keyed(req.BackendId); err != nil {
				return err
			}
		}
		if failed == nil {
			muts := mutationsFromProto(req.Mutations)
			if len(req.Packed) > 0 {
				muts, err = unpackMutations(muts, req.Packed)
			}
			if err == nil {
				err = kb.Write(st.Context(), muts)
			}
			if err != nil {
				failed = errorToProto(err)
			}
		}
		if err := st.Send(&pb.WriteAck{Error: failed}); err != nil {
			return err
		}
	}
}

// streamingKeyedClient is a keyedClient whose plugin serves WriteStream: it implements
// PipelinedWriter.
type streamingKeyedClient struct {
	*keyedClient
}

var _ PipelinedWriter = streamingKeyedClient{}

// writeStream is the host's end of a WriteStream: the batches sent and not yet
// acknowledged wait in order for their acks.
type writeStream struct {
	st     pb.StateBackend_WriteStreamClient
	cancel context.CancelFunc
	done   chan struct{} // closed when receive ends

	mu      sync.Mutex
	waiting []*streamedWrite // oldest first
	err     error            // why the stream ended; set before done closes
}

// streamedWrite is one StartWrite: acks more messages to acknowledge, then result.
type streamedWrite struct {
	acks   int
	err    error
	result chan error
}

// StartWrite implements PipelinedWriter over one WriteStream per keyed backend, opened at
// the first write and ended by Close. Batches go in messages of about 1 MiB each.
func (k streamingKeyedClient) StartWrite(ctx context.Context, mutations []Mutation) (wait func() error) {
	w := &streamedWrite{result: make(chan error, 1)}
	wait = func() error {
		select {
		case err := <-w.result:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ws, err := k.stream()
	if err != nil {
		w.result <- err
		return wait
	}
	var msgs []*pb.WriteRequest
	for len(mutations) > 0 {
		n := batchEnd(mutations, func(m Mutation) int { return len(m.Key) + len(m.Value) })
		msgs = append(msgs, &pb.WriteRequest{BackendId: k.id, Packed: packMutations(mutations[:n])})
		mutations = mutations[n:]
	}
	if len(msgs) == 0 {
		w.result <- nil
		return wait
	}
	w.acks = len(msgs)
	ws.mu.Lock()
	if ws.err != nil {
		err := ws.err
		ws.mu.Unlock()
		w.result <- err
		return wait
	}
	ws.waiting = append(ws.waiting, w)
	ws.mu.Unlock()
	for _, m := range msgs {
		if err := ws.st.Send(m); err != nil {
			// The stream is broken: receive fails every waiting write with its error.
			break
		}
	}
	return wait
}

// stream returns the keyed backend's write stream, opening it at the first call.
func (k *keyedClient) stream() (*writeStream, error) {
	if k.writes != nil {
		return k.writes, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := k.c.WriteStream(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("keyed backend %d: open write stream: %w", k.id, fromStatus(err))
	}
	ws := &writeStream{st: st, cancel: cancel, done: make(chan struct{})}
	go ws.receive()
	k.writes = ws
	return ws, nil
}

// receive hands each ack to the oldest write waiting for it, until the stream ends; then
// it fails every write still waiting.
func (ws *writeStream) receive() {
	defer close(ws.done)
	for {
		ack, err := ws.st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the plugin ended the write stream")
			} else {
				err = fromStatus(err)
			}
			ws.mu.Lock()
			ws.err = err
			waiting := ws.waiting
			ws.waiting = nil
			ws.mu.Unlock()
			for _, w := range waiting {
				w.result <- err
			}
			return
		}
		ws.mu.Lock()
		if len(ws.waiting) == 0 {
			ws.mu.Unlock()
			continue // an ack nobody waits for: cannot happen with a well-behaved plugin
		}
		w := ws.waiting[0]
		if w.err == nil {
			w.err = errorFromProto(ack.Error)
		}
		w.acks--
		if w.acks == 0 {
			ws.waiting[0] = nil
			ws.waiting = ws.waiting[1:]
		}
		ws.mu.Unlock()
		if w.acks == 0 {
			w.result <- w.err
		}
	}
}

// close half-closes the stream, waits for the plugin to end it, and releases it.
func (ws *writeStream) close(ctx context.Context) {
	_ = ws.st.CloseSend()
	select {
	case <-ws.done:
	case <-ctx.Done():
	}
	ws.cancel()
	<-ws.done
}

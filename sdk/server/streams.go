package server

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/demux"
)

// receiveFirst receives the first message of a stream from the host, which must hold what
// get finds in it (want names it); what names the stream in the error otherwise.
func receiveFirst[M, F any](recv func() (M, error), get func(M) (F, bool), what, want string) (F, error) {
	var zero F
	m, err := recv()
	if err != nil {
		return zero, err
	}
	f, ok := get(m)
	if !ok {
		return zero, fmt.Errorf("%s: the first message is not %s: %w", what, want, sdk.ErrInvalidArgument)
	}
	return f, nil
}

// bidiStream is the plugin's side of a bidirectional stream on which the plugin calls the
// host (a restore's reads, a snapshot's state streams).
type bidiStream[Out, In any] interface {
	Send(Out) error
	Recv() (In, error)
}

// hostCalls is the plugin's end of a stream on which it calls the host: its messages go
// out one at a time, and the host's answers come back through a demux.Demux.
type hostCalls[Out, In any] struct {
	st      bidiStream[Out, In]
	sendMu  sync.Mutex
	answers *demux.Demux[In]
	nextID  atomic.Uint64 // the ids of the reads or streams the plugin opens
}

// newHostCalls returns the calls on st, receiving the host's answers until it ends the
// stream; key says which call an answer is for, and what names the stream in the error of
// the calls still waiting when the host ends it.
func newHostCalls[Out, In any](st bidiStream[Out, In], key func(In) (uint64, bool), what string) *hostCalls[Out, In] {
	h := &hostCalls[Out, In]{st: st, answers: demux.New[In]()}
	go h.answers.Receive(st.Recv, key, func(err error) error {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the host ended the %s", what)
		}
		return err
	})
	return h
}

// send sends m; several goroutines may send at once.
func (h *hostCalls[Out, In]) send(m Out) error {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	return h.st.Send(m)
}

// finish sends the result of the plugin's work and waits for the host to end the stream,
// which it does once it has the result.
func (h *hostCalls[Out, In]) finish(result Out) error {
	if err := h.send(result); err != nil {
		return err
	}
	<-h.answers.Done()
	return nil
}

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/flowstate/flowstate/sdk"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// pipelinedKeyedClient is a keyedClient whose plugin serves Pipeline: it implements
// host.PipelinedWriter over one Pipeline stream per keyed backend, opened at first use and
// ended by Close.
type pipelinedKeyedClient struct {
	*keyedClient
}

// StartWrite implements host.PipelinedWriter. A batch goes in messages of about
// writeMessageBytes each, which the plugin applies one by one as they arrive: it works on
// the first while the next are on their way, instead of waiting for the whole batch.
// Measured on a final 1.2 MB write of 50k keys to leveldb, 1 MiB messages took 74-81 ms
// against 44-51 ms in-process, 128 KiB ones 50-61 ms.
func (k pipelinedKeyedClient) StartWrite(ctx context.Context, mutations []sdk.Mutation) (wait func() error) {
	var msgs []*pb.PipelineRequest
	for len(mutations) > 0 {
		n := wire.BatchEndAt(mutations, writeMessageBytes, func(m sdk.Mutation) int { return len(m.Key) + len(m.Value) })
		w := &pb.WriteRequest{BackendId: k.id, Packed: packMutations(mutations[:n])}
		msgs = append(msgs, &pb.PipelineRequest{BackendId: k.id, Op: &pb.PipelineRequest_Write{Write: w}})
		mutations = mutations[n:]
	}
	op := k.send(ctx, msgs)
	return func() error {
		_, err := op.wait(ctx)
		return err
	}
}

// writeMessageBytes is about how many bytes of mutations one Pipeline message carries.
const writeMessageBytes = 128 << 10

// StartRead implements host.PipelinedWriter. A plugin that keeps its calls one at a time itself
// (reads ahead) gets a Get call of its own, which goes before the writes it has queued. A
// plugin of an older SDK reads on the pipeline, behind the writes: the read is then made
// before StartRead returns, since only one goroutine may send on the stream.
func (k pipelinedKeyedClient) StartRead(ctx context.Context, keys [][]byte) (wait func() ([][]byte, error)) {
	if !k.readsAhead {
		vals, err := k.getAfterWrites(ctx, keys)
		return func() ([][]byte, error) { return vals, err }
	}
	var vals [][]byte
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		vals, err = k.Get(ctx, keys)
	}()
	return func() ([][]byte, error) {
		<-done // Get returns when ctx ends
		return vals, err
	}
}

// getAfterWrites reads keys on the pipeline, behind the writes started before it: it sees
// them, and fails when one of them failed.
func (k pipelinedKeyedClient) getAfterWrites(ctx context.Context, keys [][]byte) ([][]byte, error) {
	return getInBatches(k.id, keys, func(batch [][]byte) (*pb.GetResponse, error) {
		g := &pb.GetRequest{BackendId: k.id, Keys: batch}
		return k.send(ctx, []*pb.PipelineRequest{{BackendId: k.id, Op: &pb.PipelineRequest_Get{Get: g}}}).wait(ctx)
	})
}

// send sends msgs as one operation and returns it; an operation of no messages is done.
// A send that a plugin holds up (it reads nothing more) ends when ctx does, and breaks
// the pipeline: the operations in it fail.
func (k pipelinedKeyedClient) send(ctx context.Context, msgs []*pb.PipelineRequest) *pipelineOp {
	op := &pipelineOp{answers: len(msgs), result: make(chan struct{})}
	if len(msgs) == 0 {
		close(op.result)
		return op
	}
	p, err := k.pipeline()
	if err != nil {
		op.err = err
		close(op.result)
		return op
	}
	p.mu.Lock()
	if p.err != nil {
		op.err = p.err
		p.mu.Unlock()
		close(op.result)
		return op
	}
	p.waiting = append(p.waiting, op)
	p.mu.Unlock()
	stop := context.AfterFunc(ctx, p.cancel)
	defer stop()
	for _, m := range msgs {
		if err := p.st.Send(m); err != nil {
			break // the stream is broken: receive fails every waiting operation
		}
	}
	return op
}

// pipeline returns the keyed backend's pipeline, opening it at the first call.
func (k pipelinedKeyedClient) pipeline() (*pipeline, error) {
	if k.pipe != nil {
		return k.pipe, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := k.c.Pipeline(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("keyed backend %d: open pipeline: %w", k.id, wireErrors.FromStatus(err))
	}
	p := &pipeline{st: st, cancel: cancel, done: make(chan struct{})}
	go p.receive()
	k.pipe = p
	return p, nil
}

// pipeline is the host's end of a Pipeline stream: the operations sent and not yet
// answered wait in order for their answers.
type pipeline struct {
	st     pb.StateBackend_PipelineClient
	cancel context.CancelFunc
	done   chan struct{} // closed when receive ends

	mu      sync.Mutex
	waiting []*pipelineOp // oldest first
	err     error         // why the stream ended; set before done closes
}

// pipelineOp is one operation on a pipeline: it waits for answers more answers; result is
// closed once err and get are final.
type pipelineOp struct {
	answers int
	err     error
	get     *pb.GetResponse
	result  chan struct{}
}

// wait returns the operation's outcome, or ctx's error when ctx ends first.
func (op *pipelineOp) wait(ctx context.Context) (*pb.GetResponse, error) {
	select {
	case <-op.result:
		return op.get, op.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// receive hands each answer to the oldest operation waiting for it, until the stream
// ends; then it fails every operation still waiting.
func (p *pipeline) receive() {
	defer close(p.done)
	for {
		resp, err := p.st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the plugin ended the pipeline")
			} else {
				err = wireErrors.FromStatus(err)
			}
			p.mu.Lock()
			p.err = err
			waiting := p.waiting
			p.waiting = nil
			p.mu.Unlock()
			for _, op := range waiting {
				op.err = err
				close(op.result)
			}
			return
		}
		p.mu.Lock()
		if len(p.waiting) == 0 {
			p.mu.Unlock()
			continue // an answer nobody asked for: cannot happen with a well-behaved plugin
		}
		op := p.waiting[0]
		if op.err == nil {
			op.err = wireErrors.FromProto(resp.Error)
		}
		op.get = resp.Get
		op.answers--
		finished := op.answers == 0
		if finished {
			p.waiting[0] = nil
			p.waiting = p.waiting[1:]
		}
		p.mu.Unlock()
		if finished {
			close(op.result)
		}
	}
}

// close half-closes the stream, waits for the plugin to end it, and releases it.
func (p *pipeline) close(ctx context.Context) {
	_ = p.st.CloseSend()
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	p.cancel()
	<-p.done
}

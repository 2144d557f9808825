package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	"github.com/flowstate/flowstate/sdk/internal/demux"
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
		w := &pb.WriteRequest{BackendId: k.id, Packed: convert.PackMutations(mutations[:n])}
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
func (k pipelinedKeyedClient) send(ctx context.Context, msgs []*pb.PipelineRequest) pipelineOp {
	if len(msgs) == 0 {
		return pipelineOp{}
	}
	p, err := k.pipeline()
	if err != nil {
		return pipelineOp{err: err}
	}
	if err := p.answers.Err(); err != nil {
		return pipelineOp{err: err}
	}
	// The plugin answers every message, in order: one call per message, under one key.
	op := pipelineOp{calls: make([]demux.Call[*pb.PipelineResponse], len(msgs))}
	for i := range msgs {
		op.calls[i] = p.answers.Expect(0)
	}
	stop := context.AfterFunc(ctx, p.cancel)
	defer stop()
	for _, m := range msgs {
		if err := p.st.Send(m); err != nil {
			break // the stream is broken: its end fails every waiting call
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
		return nil, fmt.Errorf("keyed backend %d: open pipeline: %w", k.id, convert.Errors.FromStatus(err))
	}
	p := &pipeline{st: st, cancel: cancel, answers: demux.New[*pb.PipelineResponse]()}
	go p.answers.Receive(st.Recv, func(*pb.PipelineResponse) (uint64, bool) { return 0, true }, func(err error) error {
		if errors.Is(err, io.EOF) {
			return errors.New("the plugin ended the pipeline")
		}
		return convert.Errors.FromStatus(err)
	})
	k.pipe = p
	return p, nil
}

// pipeline is the host's end of a Pipeline stream: the operations sent and not yet
// answered wait in order for their answers.
type pipeline struct {
	st      pb.StateBackend_PipelineClient
	cancel  context.CancelFunc
	answers *demux.Demux[*pb.PipelineResponse] // the plugin answers in order: one key
}

// pipelineOp is one operation on a pipeline: a call for each of its messages, or the error
// that kept it from being sent.
type pipelineOp struct {
	calls []demux.Call[*pb.PipelineResponse]
	err   error
}

// wait returns the operation's outcome once every message is answered: the error of the
// first answer that failed, and the Get answer of the last; or ctx's error when ctx ends
// first, or the pipeline's when it ends first.
func (op pipelineOp) wait(ctx context.Context) (*pb.GetResponse, error) {
	if op.err != nil {
		return nil, op.err
	}
	var get *pb.GetResponse
	var failed error
	for _, c := range op.calls {
		resp, err := c.Wait(ctx)
		if err != nil {
			return nil, err
		}
		if failed == nil {
			failed = convert.Errors.FromProto(resp.Error)
		}
		get = resp.Get
	}
	return get, failed
}

// close half-closes the stream, waits for the plugin to end it, and releases it.
func (p *pipeline) close(ctx context.Context) {
	_ = p.st.CloseSend()
	select {
	case <-p.answers.Done():
	case <-ctx.Done():
	}
	p.cancel()
	<-p.answers.Done()
}

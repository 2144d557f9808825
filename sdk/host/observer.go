package host

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// CallObserver sees the gRPC traffic of the plugin protocol between the host and one
// plugin (Config.Observer): for counting messages and timing calls. Methods are named
// "Service/Method" after the protocol's services, for example "StateBackend/Get",
// "StateBackend/Pipeline" or "CheckpointStorage/WriteState"; go-plugin's own services
// (health checks, stdio, shutdown) are not reported. The methods are called from many
// goroutines at once and must return quickly.
type CallObserver interface {
	// CallDone reports a call that ended, took after it began: a unary call when its
	// answer (or error) arrived, a stream when the plugin ended it, when it failed, or
	// when the host gave up on it (its context ended). err is nil for a call that
	// succeeded, otherwise the error the call ended with, as gRPC reported it.
	CallDone(method string, took time.Duration, err error)
	// Message reports one message of a call, sent to the plugin (sent) or received from
	// it: a unary call has one of each when it succeeds, a stream one per message.
	Message(method string, sent bool)
}

// protocolPrefix starts the full gRPC method names of the plugin protocol's services.
const protocolPrefix = "/flowstate.v1."

// observe returns the dial options that report the host's calls to o; none when o is nil.
func observe(o CallObserver) []grpc.DialOption {
	if o == nil {
		return nil
	}
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, fullMethod string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			method, ok := protocolMethod(fullMethod)
			if !ok {
				return invoker(ctx, fullMethod, req, reply, cc, opts...)
			}
			start := time.Now()
			o.Message(method, true)
			err := invoker(ctx, fullMethod, req, reply, cc, opts...)
			if err == nil {
				o.Message(method, false)
			}
			o.CallDone(method, time.Since(start), err)
			return err
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, fullMethod string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			method, ok := protocolMethod(fullMethod)
			if !ok {
				return streamer(ctx, desc, cc, fullMethod, opts...)
			}
			start := time.Now()
			cs, err := streamer(ctx, desc, cc, fullMethod, opts...)
			if err != nil {
				o.CallDone(method, time.Since(start), err)
				return nil, err
			}
			s := &observedStream{ClientStream: cs, o: o, method: method, start: start, serverStreams: desc.ServerStreams}
			s.stop = context.AfterFunc(ctx, func() { s.end(ctx.Err()) })
			return s, nil
		}),
	}
}

// protocolMethod returns "Service/Method" for a full method name of the plugin protocol.
func protocolMethod(fullMethod string) (string, bool) {
	return strings.CutPrefix(fullMethod, protocolPrefix)
}

// observedStream reports the messages of a stream, and its end once.
type observedStream struct {
	grpc.ClientStream
	o             CallObserver
	method        string
	start         time.Time
	serverStreams bool        // the plugin sends a stream: it ends with io.EOF
	stop          func() bool // unregisters the report of an ended context
	once          sync.Once
}

// end reports the stream's end, the first time it is called.
func (s *observedStream) end(err error) {
	s.once.Do(func() { s.o.CallDone(s.method, time.Since(s.start), err) })
}

func (s *observedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err == nil {
		s.o.Message(s.method, true)
	}
	return err
}

func (s *observedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == nil:
		s.o.Message(s.method, false)
		if s.serverStreams {
			return nil
		}
		s.end(nil) // the one answer of a client stream ends it
	case errors.Is(err, io.EOF):
		s.end(nil)
	default:
		s.end(err)
	}
	s.stop()
	return err
}

package monitor

import (
	"context"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// PluginDialOptions returns the gRPC dial options that time every call into plugin for
// flowstate_plugin_callLatency_seconds: a unary call from start to answer, a stream from
// its opening to its end (the last message or an error). The plugin host passes them to
// go-plugin's ClientConfig.GRPCDialOptions. On a nil Monitor they are none.
func (m *Monitor) PluginDialOptions(plugin string) []grpc.DialOption {
	if m == nil {
		return nil
	}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		m.ObservePluginCall(plugin, methodName(method), time.Since(start))
		return err
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		start := time.Now()
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			m.ObservePluginCall(plugin, methodName(method), time.Since(start))
			return nil, err
		}
		return &timedStream{ClientStream: cs, serverStreams: desc.ServerStreams, done: func() {
			m.ObservePluginCall(plugin, methodName(method), time.Since(start))
		}}, nil
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}

// methodName shortens a gRPC method to service and method: "/pkg.v1.StateBackend/Get"
// becomes "StateBackend/Get".
func methodName(full string) string {
	full = strings.TrimPrefix(full, "/")
	service, method, ok := strings.Cut(full, "/")
	if !ok {
		return full
	}
	if i := strings.LastIndexByte(service, '.'); i >= 0 {
		service = service[i+1:]
	}
	return service + "/" + method
}

// timedStream calls done once, when the stream ends: RecvMsg fails (io.EOF included), or
// returns the one answer of a stream the server does not stream.
type timedStream struct {
	grpc.ClientStream
	serverStreams bool
	once          sync.Once
	done          func()
}

func (s *timedStream) RecvMsg(msg any) error {
	err := s.ClientStream.RecvMsg(msg)
	if err != nil || !s.serverStreams {
		s.once.Do(s.done)
	}
	return err
}

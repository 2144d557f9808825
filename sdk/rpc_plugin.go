package sdk

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

func init() { wire.Register(&grpcPlugin{}) }

// grpcPlugin is go-plugin's view of a Flowstate plugin: on the plugin side it registers
// the services impl implements; on the host side it returns an *rpcClient.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl      Plugin
	protocols []int
}

// GRPCServer registers Info, and StateBackend and CheckpointStorage when impl has them.
func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("flowstate plugin: nothing to serve")
	}
	pb.RegisterInfoServer(s, &infoServer{impl: p.impl, protocols: p.protocols})
	if sb, ok := p.impl.(StateBackend); ok {
		pb.RegisterStateBackendServer(s, &backendServer{impl: sb})
	}
	if cs, ok := p.impl.(CheckpointStorage); ok {
		pb.RegisterCheckpointStorageServer(s, &storageServer{impl: cs})
	}
	return nil
}

// GRPCClient returns the host's client of the plugin's services.
func (p *grpcPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &rpcClient{
		done:    ctx.Done(),
		info:    pb.NewInfoClient(c),
		backend: pb.NewStateBackendClient(c),
		storage: pb.NewCheckpointStorageClient(c),
	}, nil
}

// serverOptions are the options of every plugin's gRPC server: the receive limit and the
// interceptors that turn errors into statuses and panics into errors.
func serverOptions(logger hclog.Logger) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(wire.MaxRecvMsgSize),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
			defer recoverPanic(logger, info.FullMethod, &err)
			resp, err = h(ctx, req)
			return resp, toStatus(err)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
			defer recoverPanic(logger, info.FullMethod, &err)
			return toStatus(h(srv, ss))
		}),
	}
}

// recoverPanic turns a panic of a plugin method into the error of its call.
func recoverPanic(logger hclog.Logger, method string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	logger.Error("plugin panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	*err = status.Errorf(codes.Internal, "plugin panicked: %v (in %s)", r, method)
}

// infoServer serves the Info service.
type infoServer struct {
	pb.UnimplementedInfoServer
	impl      Plugin
	protocols []int
}

func (s *infoServer) Describe(context.Context, *pb.Empty) (*pb.DescribeResponse, error) {
	info := s.impl.PluginInfo()
	vs := make([]int32, len(s.protocols))
	for i, v := range s.protocols {
		vs[i] = int32(v)
	}
	return &pb.DescribeResponse{
		Name:             info.Name,
		Version:          info.Version,
		Kinds:            kindsToProto(KindsOf(s.impl)),
		ProtocolVersions: vs,
	}, nil
}

func (s *infoServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.Empty, error) {
	opts := Options(req.Options)
	if opts == nil {
		opts = Options{}
	}
	return &pb.Empty{}, s.impl.Configure(ctx, opts)
}

// rpcClient is the host's side of a plugin's connection. Package sdk/host reaches its
// methods through an interface of its own.
type rpcClient struct {
	done    <-chan struct{} // closed when the plugin process has exited
	info    pb.InfoClient
	backend pb.StateBackendClient
	storage pb.CheckpointStorageClient
}

// Done is closed when the plugin process has exited.
func (c *rpcClient) Done() <-chan struct{} { return c.done }

// Describe returns what the plugin says about itself.
func (c *rpcClient) Describe(ctx context.Context) (PluginInfo, []Kind, []int, error) {
	r, err := c.info.Describe(ctx, &pb.Empty{})
	if err != nil {
		return PluginInfo{}, nil, nil, fromStatus(err)
	}
	vs := make([]int, len(r.ProtocolVersions))
	for i, v := range r.ProtocolVersions {
		vs[i] = int(v)
	}
	return PluginInfo{Name: r.Name, Version: r.Version}, kindsFromProto(r.Kinds), vs, nil
}

// Configure calls the plugin's Configure.
func (c *rpcClient) Configure(ctx context.Context, opts Options) error {
	_, err := c.info.Configure(ctx, &pb.ConfigureRequest{Options: opts})
	return fromStatus(err)
}

// StateBackend returns the plugin's state backend, described by info.
func (c *rpcClient) StateBackend(info PluginInfo) StateBackend {
	return &backendClient{rpc: c, pluginInfo: info}
}

// CheckpointStorage returns the plugin's checkpoint storage, described by info.
func (c *rpcClient) CheckpointStorage(info PluginInfo) CheckpointStorage {
	return &storageClient{rpc: c, pluginInfo: info}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// grpcPlugin is go-plugin's view of the plugin being served: it registers the services
// impl implements. It has no host side (see sdk/internal/client).
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl      sdk.Plugin
	protocols []int
}

// GRPCServer registers Info, and StateBackend and CheckpointStorage when impl has them.
func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterInfoServer(s, &infoServer{impl: p.impl, protocols: p.protocols})
	if sb, ok := p.impl.(sdk.StateBackend); ok {
		pb.RegisterStateBackendServer(s, &backendServer{impl: sb})
	}
	if cs, ok := p.impl.(sdk.CheckpointStorage); ok {
		pb.RegisterCheckpointStorageServer(s, &storageServer{impl: cs})
	}
	return nil
}

// GRPCClient fails: a plugin process is never a host.
func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("flowstate plugin: the plugin end has no client (hosts use sdk/host)")
}

// serverOptions are the options of every plugin's gRPC server: the receive limit and the
// interceptors that turn errors into statuses and panics into errors.
func serverOptions(logger hclog.Logger) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(wire.MaxRecvMsgSize),
		grpc.InitialWindowSize(wire.StreamWindow), grpc.InitialConnWindowSize(wire.ConnWindow),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
			defer recoverPanic(logger, info.FullMethod, &err)
			resp, err = h(ctx, req)
			return resp, convert.Errors.ToStatus(err)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
			defer recoverPanic(logger, info.FullMethod, &err)
			return convert.Errors.ToStatus(h(srv, ss))
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
	impl      sdk.Plugin
	protocols []int
}

func (s *infoServer) Describe(context.Context, *pb.Empty) (*pb.DescribeResponse, error) {
	info := s.impl.PluginInfo()
	vs := make([]int32, len(s.protocols))
	for i, v := range s.protocols {
		vs[i] = int32(v)
	}
	kinds := convert.KindsOf(s.impl)
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return &pb.DescribeResponse{Name: info.Name, Version: info.Version, Kinds: names, ProtocolVersions: vs}, nil
}

func (s *infoServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.Empty, error) {
	opts := sdk.Options(req.Options)
	if opts == nil {
		opts = sdk.Options{}
	}
	return &pb.Empty{}, s.impl.Configure(ctx, opts)
}

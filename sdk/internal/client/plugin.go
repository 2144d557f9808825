// Package client is the host end of Flowstate's plugin protocol: gRPC clients that hand a
// host the sdk's interfaces (sdk.StateBackend, sdk.CheckpointStorage and what they create)
// for a plugin served in another process by server.Serve. Package sdk/host starts plugins and
// uses it; plugin binaries never link it.
//
// It shares the converters, the demultiplexer and the wire's tables with the plugin end
// (sdk/internal/convert, sdk/internal/demux, sdk/internal/wire) and must never import the
// plugin end itself (sdk/server), nor sdk/host, which imports it.
package client

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// Plugin is go-plugin's view of a Flowstate plugin on the host: it dispenses a *Remote. It
// serves nothing (the plugin end is in package sdk).
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
}

// GRPCServer fails: a host never serves a plugin.
func (Plugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("flowstate host: the host end serves nothing (plugins call server.Serve)")
}

// GRPCClient returns the host's client of the plugin's services on c; ctx ends when the
// plugin process exits.
func (Plugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Remote{
		done:    ctx.Done(),
		info:    pb.NewInfoClient(c),
		backend: pb.NewStateBackendClient(c),
		storage: pb.NewCheckpointStorageClient(c),
	}, nil
}

// Remote is the host's end of one plugin's connection.
type Remote struct {
	done    <-chan struct{} // closed when the plugin process has exited
	info    pb.InfoClient
	backend pb.StateBackendClient
	storage pb.CheckpointStorageClient
}

// Done is closed when the plugin process has exited.
func (c *Remote) Done() <-chan struct{} { return c.done }

// Describe returns what the plugin says about itself: name and version, kinds and the
// protocol versions it speaks.
func (c *Remote) Describe(ctx context.Context) (sdk.PluginInfo, []sdk.Kind, []int, error) {
	r, err := c.info.Describe(ctx, &pb.Empty{})
	if err != nil {
		return sdk.PluginInfo{}, nil, nil, convert.Errors.FromStatus(err)
	}
	vs := make([]int, len(r.ProtocolVersions))
	for i, v := range r.ProtocolVersions {
		vs[i] = int(v)
	}
	kinds := make([]sdk.Kind, len(r.Kinds))
	for i, k := range r.Kinds {
		kinds[i] = sdk.Kind(k)
	}
	return sdk.PluginInfo{Name: r.Name, Version: r.Version}, kinds, vs, nil
}

// Configure calls the plugin's Configure.
func (c *Remote) Configure(ctx context.Context, opts sdk.Options) error {
	_, err := c.info.Configure(ctx, &pb.ConfigureRequest{Options: opts})
	return convert.Errors.FromStatus(err)
}

// StateBackend returns the plugin's state backend, described by info.
func (c *Remote) StateBackend(info sdk.PluginInfo) sdk.StateBackend {
	return &backendClient{rpc: c, pluginInfo: info}
}

// CheckpointStorage returns the plugin's checkpoint storage, described by info.
func (c *Remote) CheckpointStorage(info sdk.PluginInfo) sdk.CheckpointStorage {
	return &storageClient{rpc: c, pluginInfo: info}
}

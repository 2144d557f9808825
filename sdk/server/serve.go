// Package server is the plugin's end of Flowstate's plugin protocol: Serve, the whole main
// function of a plugin, and the gRPC servers it runs, which hand the calls of the runner to
// the plugin's implementation of the contract (package sdk). It stands apart from the
// contract as terraform-plugin-go's tf6server stands apart from tfprotov6: a plugin author
// reads package sdk and calls Serve once.
//
// It imports the contract, the protocol and the SDK's shared internals (convert, demux,
// wire, prio); it must never import the host end (sdk/host, sdk/internal/client), so a
// plugin binary does not link it.
package server

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Option tunes Serve; none is what a plugin needs.
type Option func(*options)

// options are what the Options of a Serve call set.
type options struct {
	protocols []int
}

// WithProtocolVersions makes the plugin offer the protocol versions vs instead of the one
// this SDK speaks (host.ProtocolVersion). The SDK's tests use it to play a plugin of another
// version.
func WithProtocolVersions(vs ...int) Option {
	return func(o *options) { o.protocols = slices.Clone(vs) }
}

// Serve is the whole main function of a plugin: it serves p to the Flowstate runner that
// started the process and returns when the runner is done with it. p is served as a state
// backend if it implements StateBackend and as a checkpoint storage if it implements
// CheckpointStorage (both: one binary, both kinds). A value with neither kind, or with a
// name that does not match [a-z0-9][a-z0-9-]*, makes Serve exit with an error on stderr.
//
// Serve makes sdk.Logger (and hclog's default logger) write JSON lines to stderr, which the
// runner logs under the plugin's name; nothing may print to stdout. The process exits
// when the runner dies. A panic in a method of p fails that call only, with an error
// naming the method. opts tune it; none is what a plugin needs.
func Serve(p sdk.Plugin, opts ...Option) {
	logger := newPluginLogger()
	hclog.SetDefault(logger)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	protocols := o.protocols
	if len(protocols) == 0 {
		protocols = []int{wire.ProtocolVersion}
	}
	if err := checkServable(p); err != nil {
		logger.Error("cannot serve plugin", "error", err.Error())
		os.Exit(1)
	}
	handshake := wire.Handshake(wire.ProtocolVersion)
	if os.Getenv(handshake.MagicCookieKey) == handshake.MagicCookieValue {
		// Started by a host: say which versions the plugin speaks when none matches,
		// instead of go-plugin's fallback to a version the host will refuse.
		if host := hostProtocols(); len(host) > 0 && !sharesVersion(protocols, host) {
			logger.Error(wire.ProtocolMismatchMessage, wire.PluginProtocolsKey, protocols, "host_protocols", host)
			os.Exit(1)
		}
		go watchParent(logger, os.Getppid())
		nameProcess()
	}
	versioned := make(map[int]plugin.PluginSet, len(protocols))
	for _, v := range protocols {
		versioned[v] = plugin.PluginSet{wire.PluginName: &grpcPlugin{impl: p, protocols: protocols}}
	}
	stopProfile := startCPUProfile(logger)
	defer stopProfile()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: versioned,
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(o, serverOptions(logger)...)...)
		},
		Logger: logger,
	})
}

// newPluginLogger writes JSON lines to the process's stderr at the level the host asks
// for (info when it does not).
func newPluginLogger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(wire.LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Output:     os.Stderr, // the real stderr: go-plugin redirects os.Stderr later
		Level:      level,
		JSONFormat: true,
	})
}

// checkServable checks that p has a valid name and at least one kind.
func checkServable(p sdk.Plugin) error {
	if p == nil {
		return fmt.Errorf("server.Serve: no plugin given")
	}
	name := p.PluginInfo().Name
	if err := p.PluginInfo().CheckName(); err != nil {
		return fmt.Errorf("server.Serve: %w", err)
	}
	if len(convert.KindsOf(p)) == 0 {
		return fmt.Errorf("server.Serve: plugin %q implements neither StateBackend nor CheckpointStorage", name)
	}
	return nil
}

// hostProtocols returns the protocol versions the host offers, as go-plugin passes them.
func hostProtocols() []int {
	var vs []int
	for _, s := range strings.Split(os.Getenv("PLUGIN_PROTOCOL_VERSIONS"), ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

func sharesVersion(a, b []int) bool {
	for _, v := range a {
		if slices.Contains(b, v) {
			return true
		}
	}
	return false
}

// watchParent exits the process when its parent (the runner) is gone: a second guard,
// after the host's parent-death signal, against orphaned plugin processes.
func watchParent(logger hclog.Logger, ppid int) {
	for range time.Tick(250 * time.Millisecond) {
		if os.Getppid() != ppid {
			logger.Warn("runner process is gone: exiting", "runner_pid", ppid)
			os.Exit(2)
		}
	}
}

package sdk

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

	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// ProtocolVersion is the version of the plugin protocol this SDK speaks. Hosts keep
// speaking earlier versions alongside newer ones (docs/plugin-authors.md, section 10).
const ProtocolVersion = 1

// ServeOpts tune Serve; the zero value is what Serve uses without options.
type ServeOpts struct {
	// ProtocolVersions are the protocol versions the plugin offers; nil means
	// {ProtocolVersion}. The SDK's tests use it to play a plugin of another version.
	ProtocolVersions []int
}

// Serve is the whole main function of a plugin: it serves p to the Flowstate runner that
// started the process and returns when the runner is done with it. p is served as a state
// backend if it implements StateBackend and as a checkpoint storage if it implements
// CheckpointStorage (both: one binary, both kinds). A value with neither kind, or with a
// name that does not match [a-z0-9][a-z0-9-]*, makes Serve exit with an error on stderr.
//
// Serve makes Logger (and hclog's default logger) write JSON lines to stderr, which the
// runner logs under the plugin's name; nothing may print to stdout. The process exits
// when the runner dies. A panic in a method of p fails that call only, with an error
// naming the method. opts, at most one, tune it; none is what a plugin needs.
func Serve(p Plugin, opts ...ServeOpts) {
	logger := newPluginLogger()
	hclog.SetDefault(logger)
	var o ServeOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	protocols := o.ProtocolVersions
	if len(protocols) == 0 {
		protocols = []int{ProtocolVersion}
	}
	if err := checkServable(p); err != nil {
		logger.Error("cannot serve plugin", "error", err.Error())
		os.Exit(1)
	}
	handshake := wire.Handshake(ProtocolVersion)
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

// Logger returns the logger plugins log with: once Serve runs, JSON lines on stderr that
// the runner logs under the plugin's name.
func Logger() hclog.Logger { return hclog.Default() }

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
func checkServable(p Plugin) error {
	if p == nil {
		return fmt.Errorf("sdk.Serve: no plugin given")
	}
	name := p.PluginInfo().Name
	if !validName(name) {
		return fmt.Errorf("sdk.Serve: plugin name %q must match [a-z0-9][a-z0-9-]*", name)
	}
	if len(kindsOf(p)) == 0 {
		return fmt.Errorf("sdk.Serve: plugin %q implements neither StateBackend nor CheckpointStorage", name)
	}
	return nil
}

func validName(name string) bool {
	if name == "" || name[0] == '-' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
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

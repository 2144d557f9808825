// Package wire holds what the plugin side (package sdk) and the host side (package
// sdk/host) of Flowstate's plugin protocol share without importing each other: the
// go-plugin plugin that package sdk registers, sizes and names of the protocol, and the
// id tables of server-side objects.
package wire

import (
	"sync"

	"github.com/hashicorp/go-plugin"
)

const (
	// PluginName is the name of Flowstate's plugin in go-plugin's plugin sets.
	PluginName = "flowstate"
	// ChunkSize is the size of the chunks byte streams are cut into.
	ChunkSize = 1 << 20
	// BatchBytes bounds the payload of one batched call (Get, Write, Scan, discard).
	BatchBytes = 1 << 20
	// MaxRecvMsgSize is the plugin server's receive limit: a safety margin only, since
	// no message of the protocol comes near gRPC's default 4 MiB.
	MaxRecvMsgSize = 16 << 20
	// LogLevelEnv names the environment variable through which a host passes its log
	// level to the plugins it starts.
	LogLevelEnv = "FLOWSTATE_PLUGIN_LOG_LEVEL"
	// ProtocolMismatchMessage is the message of the log line a plugin writes to stderr
	// before exiting when it shares no protocol version with its host.
	ProtocolMismatchMessage = "no common protocol version"
	// PluginProtocolsKey is the key, in that log line, of the versions the plugin speaks.
	PluginProtocolsKey = "plugin_protocols"
)

var (
	mu         sync.Mutex
	grpcPlugin plugin.Plugin
)

// Register sets the go-plugin plugin that serves and dials Flowstate's services. Package
// sdk calls it from an init function.
func Register(p plugin.Plugin) {
	mu.Lock()
	defer mu.Unlock()
	grpcPlugin = p
}

// Plugin returns the plugin set by Register, nil when package sdk is not linked in.
func Plugin() plugin.Plugin {
	mu.Lock()
	defer mu.Unlock()
	return grpcPlugin
}

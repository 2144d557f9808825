// Package wire holds what the two ends of Flowstate's plugin protocol share without
// naming the sdk's types: the plugin end (sdk/server, which Serve runs) and the host end
// (package sdk/internal/client, which sdk/host uses). It has the protocol's names and
// sizes, the handshake, the id tables of objects a plugin serves, batching and chunking,
// the packing of mutations, the error codec and the checksum of state streams. Neither end
// imports the other: a plugin binary links the plugin end only.
//
// It imports only the protocol (sdk/internal/proto), gRPC and go-plugin, and must never
// import the contract (sdk), the converters or either end.
package wire

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

const (
	// ProtocolVersion is the version of the plugin protocol this SDK speaks: what the
	// server offers and the host speaks by default (exported as host.ProtocolVersion).
	// Hosts keep speaking earlier versions alongside newer ones (docs/plugin-authors.md,
	// section 10).
	ProtocolVersion = 1
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
	// CPUProfileEnv names the environment variable that asks plugins for a CPU profile
	// (see sdk/host.CPUProfileEnv).
	CPUProfileEnv = "FLOWSTATE_PLUGIN_CPUPROFILE"
	// ProtocolMismatchMessage is the message of the log line a plugin writes to stderr
	// before exiting when it shares no protocol version with its host.
	ProtocolMismatchMessage = "no common protocol version"
	// PluginProtocolsKey is the key, in that log line, of the versions the plugin speaks.
	PluginProtocolsKey = "plugin_protocols"
)

// Handshake returns go-plugin's handshake of Flowstate plugins at protocol version v. The
// cookie only tells a user who runs a plugin binary by hand that it is a plugin.
func Handshake(v uint) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  v,
		MagicCookieKey:   "FLOWSTATE_PLUGIN",
		MagicCookieValue: "d2f1c1c6-state-backend-and-checkpoint-storage",
	}
}

// StreamWindow and ConnWindow are the HTTP/2 flow-control windows both ends open, per
// stream and per connection: wide enough that a 1 MiB chunk of a snapshot or a restore
// crosses without waiting for the receiver's window updates.
const (
	StreamWindow = 4 << 20
	ConnWindow   = 8 << 20
)

// DialWindows returns the host's dial options for StreamWindow and ConnWindow.
func DialWindows() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(StreamWindow), grpc.WithInitialConnWindowSize(ConnWindow)}
}

package sdk

import (
	"context"
	"hash"
	"io"

	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Names that served hosts, not plugins, and moved out of package sdk. They stay for one
// release so that code using them keeps compiling; each says where it went.

// KindsOf returns the kinds p implements, state backend first.
//
// Deprecated: use host.KindsOf; Serve checks the kinds itself.
func KindsOf(p Plugin) []Kind { return kindsOf(p) }

// PipelinedWriter is implemented by the KeyedStateBackend a host gets for a keyed backend
// in a plugin process; plugins never implement it.
//
// Deprecated: use host.PipelinedWriter, which has the same methods.
type PipelinedWriter interface {
	StartWrite(ctx context.Context, mutations []Mutation) (wait func() error)
	StartRead(ctx context.Context, keys [][]byte) (wait func() ([][]byte, error))
}

// ServeWithOptions is Serve with options.
//
// Deprecated: use Serve(p, opts).
func ServeWithOptions(p Plugin, opts ServeOpts) { Serve(p, opts) }

// CPUProfileEnv names the environment variable that makes plugins write CPU profiles.
//
// Deprecated: use host.CPUProfileEnv.
const CPUProfileEnv = "FLOWSTATE_PLUGIN_CPUPROFILE"

// Handshake is the go-plugin handshake of Flowstate plugins, for hosts that start them.
//
// Deprecated: hosts start plugins with sdk/host, which performs the handshake.
var Handshake = wire.Handshake(ProtocolVersion)

// Checksum returns the CRC-32C (Castagnoli) of b: the checksum StreamStateHandle.Checksum
// carries.
//
// Deprecated: use host.Checksum; plugins copy checksums unchanged.
func Checksum(b []byte) uint32 { return wire.Checksum(b) }

// NewChecksum returns a hash computing Checksum over the bytes written to it.
//
// Deprecated: use host.NewChecksum.
func NewChecksum() hash.Hash32 { return wire.NewChecksum() }

// VerifyingReader returns a reader of rc, the bytes of h, that checks them against h as
// they are read; a mismatch is an error wrapping ErrCorrupt.
//
// Deprecated: use host.VerifyingReader.
func VerifyingReader(rc io.ReadCloser, h StreamStateHandle) io.ReadCloser {
	return wire.VerifyingReader(rc, wire.Expect{Ref: h.Ref, Size: h.Size, Checksum: h.Checksum}, ErrCorrupt)
}

package host

import (
	"hash"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// CPUProfileEnv names an environment variable for profiling plugins: when it holds a
// directory, a plugin served by server.Serve writes a CPU profile of its whole life there, as
// <executable>-<pid>.pprof, when the host stops it. Plugins inherit the host's
// environment, so `FLOWSTATE_PLUGIN_CPUPROFILE=/tmp/prof runner run ...` profiles every
// plugin of a job. A plugin killed outright writes no profile.
const CPUProfileEnv = "FLOWSTATE_PLUGIN_CPUPROFILE"

// Checksum returns the CRC-32C (Castagnoli) of b: the checksum sdk.StreamStateHandle
// carries, which the host computes as state bytes pass through it.
func Checksum(b []byte) uint32 { return wire.Checksum(b) }

// NewChecksum returns a hash computing Checksum over the bytes written to it.
func NewChecksum() hash.Hash32 { return wire.NewChecksum() }

// VerifyingReader returns a reader of rc, the bytes of h, that checks them against h as
// they are read: more bytes than h.Size, fewer at the end, or (when h.Checksum is set) a
// CRC-32C that differs is an error wrapping sdk.ErrCorrupt. The runner reads every handle
// through it, and the SDK in a plugin reads the local files of handles through it.
func VerifyingReader(rc io.ReadCloser, h sdk.StreamStateHandle) io.ReadCloser {
	return wire.VerifyingReader(rc, wire.Expect{Ref: h.Ref, Size: h.Size, Checksum: h.Checksum}, sdk.ErrCorrupt)
}

// KindsOf returns the kinds p implements, state backend first: what server.Serve serves of
// it, for a plugin the host runs in its own process.
func KindsOf(p sdk.Plugin) []sdk.Kind { return convert.KindsOf(p) }

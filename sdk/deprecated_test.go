package sdk

import (
	"testing"

	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// TestDeprecatedNamesSayTheSame: the deprecated names kept for one release mean what they
// meant.
func TestDeprecatedNamesSayTheSame(t *testing.T) {
	if CPUProfileEnv != wire.CPUProfileEnv {
		t.Errorf("CPUProfileEnv is %q, the plugin end reads %q", CPUProfileEnv, wire.CPUProfileEnv)
	}
	if Handshake.MagicCookieKey != "FLOWSTATE_PLUGIN" || Handshake.ProtocolVersion != ProtocolVersion {
		t.Errorf("Handshake = %+v", Handshake)
	}
	if Checksum([]byte("123456789")) != 0xe3069283 { // CRC-32C's check value
		t.Errorf("Checksum is not CRC-32C")
	}
}

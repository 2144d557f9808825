package host_test

import (
	"testing"

	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// TestCPUProfileEnvIsTheOnePluginsRead: the variable host.CPUProfileEnv names is the one
// the plugin end reads.
func TestCPUProfileEnvIsTheOnePluginsRead(t *testing.T) {
	if host.CPUProfileEnv != wire.CPUProfileEnv {
		t.Errorf("host.CPUProfileEnv is %q, the plugin end reads %q", host.CPUProfileEnv, wire.CPUProfileEnv)
	}
}

package host_test

import (
	"os/exec"
	"strings"
	"testing"
)

// symbols returns the symbol table of the binary at path, as go tool nm prints it.
func symbols(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "nm", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm %s: %v\n%s", path, err, out)
	}
	return string(out)
}

// TestPluginBinaryLinksNoHostEnd: a plugin binary holds the plugin end of the protocol
// (sdk/server's servers) and what both ends share (sdk/internal/wire, sdk/internal/convert,
// sdk/internal/demux), and nothing of the host end (sdk/internal/client, sdk/host).
func TestPluginBinaryLinksNoHostEnd(t *testing.T) {
	const (
		pluginEnd = "github.com/flowstate/flowstate/sdk/server.(*storageServer)."
		shared    = "github.com/flowstate/flowstate/sdk/internal/wire."
		converter = "github.com/flowstate/flowstate/sdk/internal/convert."
		demuxer   = "github.com/flowstate/flowstate/sdk/internal/demux."
		clientEnd = "github.com/flowstate/flowstate/sdk/internal/client."
		hostPkg   = "github.com/flowstate/flowstate/sdk/host."
	)
	for _, name := range []string{"mem", "memstorage", "refprev"} {
		syms := symbols(t, pluginPath(name))
		for _, want := range []string{pluginEnd, shared, converter, demuxer} { // the names checked are the linked ones
			if !strings.Contains(syms, want) {
				t.Errorf("plugin %s: no symbol %s*", name, want)
			}
		}
		for _, host := range []string{clientEnd, hostPkg} {
			for _, line := range strings.Split(syms, "\n") {
				if strings.Contains(line, host) {
					t.Errorf("plugin %s links the host end: %s", name, strings.TrimSpace(line))
					break
				}
			}
		}
	}
}

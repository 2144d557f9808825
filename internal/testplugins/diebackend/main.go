// Command diebackend is the hashmap state backend that kills its own process with SIGKILL
// at a chosen moment of its life, a given number of times in all, for the runner's tests of
// plugins that die while they are started, configured or restore state. It takes its orders
// from a file beside its binary, named as the binary plus ".die", holding one line:
//
//	PHASE N
//
// PHASE is start (before the plugin's handshake), configure (in Configure) or restore (in a
// keyed backend's Restore). The first N processes that reach PHASE die there; each death
// first creates the file <binary>.died-K (K = 1..N, with O_EXCL) beside the binary, so the
// count outlives the processes and a test can read how many died. Without the file the
// plugin is hashmap.
//
// It links, like a plugin, only the SDK (its contract and plugin end, sdk/server) and
// plugins/hashmap/hashmap: never the runtime nor the SDK's host end.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	dieAt("start")
	server.Serve(&backend{Backend: hashmap.New()})
}

// dieAt kills the process if the orders beside the binary name phase and fewer than their
// count of processes died there yet.
func dieAt(phase string) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	orders, err := os.ReadFile(exe + ".die")
	if err != nil {
		return
	}
	var want string
	var n int
	if _, err := fmt.Sscan(string(orders), &want, &n); err != nil || want != phase {
		return
	}
	for k := 1; k <= n; k++ {
		f, err := os.OpenFile(exe+".died-"+strconv.Itoa(k), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			continue // an earlier process died as death k
		}
		f.Close()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL ends the process before this returns
	}
}

type backend struct{ *hashmap.Backend }

func (b *backend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "diebackend", Version: "0.0.1"}
}

func (b *backend) Configure(ctx context.Context, opts sdk.Options) error {
	dieAt("configure")
	return b.Backend.Configure(ctx, opts)
}

func (b *backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	kb, err := b.Backend.CreateKeyedStateBackend(ctx, p)
	if err != nil {
		return nil, err
	}
	return &keyed{KeyedStateBackend: kb}, nil
}

// keyed dies in Restore when the orders say so.
type keyed struct{ sdk.KeyedStateBackend }

func (k *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	dieAt("restore")
	return k.KeyedStateBackend.Restore(ctx, handles, state)
}

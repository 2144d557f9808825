// Command bigmsg is a hostile state backend: the first Get of each keyed backend answers
// with a value of 8 MiB (twice gRPC's default message limit) where the runner expects a
// few bytes. The runner must fail the job with a clear error instead of crashing.
//
// It links, like a plugin, only the SDK (its contract and plugin end, sdk/server) and
// plugins/hashmap/hashmap: never the runtime nor the SDK's host end.
package main

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/server"
)

// valueSize is the size of every value Get returns: twice gRPC's default 4 MiB limit.
const valueSize = 8 << 20

func main() { server.Serve(&backend{inner: hashmap.New()}) }

type backend struct{ inner *hashmap.Backend }

// PluginInfo implements sdk.Plugin.
func (b *backend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "bigmsg", Version: "0.1.0"}
}

// Configure implements sdk.Plugin; it accepts any option.
func (b *backend) Configure(context.Context, sdk.Options) error { return nil }

// CreateKeyedStateBackend implements sdk.StateBackend.
func (b *backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	kb, err := b.inner.CreateKeyedStateBackend(ctx, p)
	if err != nil {
		return nil, err
	}
	return &keyed{KeyedStateBackend: kb}, nil
}

type keyed struct {
	sdk.KeyedStateBackend
	sent atomic.Bool
}

// Get implements sdk.KeyedStateBackend with one oversized value, once: the client asks
// again for the keys a reply left out, so sending it every time would only be slow.
func (k *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if len(keys) == 0 || k.sent.Swap(true) {
		return k.KeyedStateBackend.Get(ctx, keys)
	}
	out := make([][]byte, len(keys))
	out[0] = bytes.Repeat([]byte{'x'}, valueSize)
	return out, nil
}

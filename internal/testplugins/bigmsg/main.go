// Command bigmsg is a hostile state backend: every Get answers with a value of 8 MiB, so
// each reply is larger than gRPC lets the runner receive. The runner must fail the job with
// a clear error instead of crashing or buffering without bound.
package main

import (
	"bytes"
	"context"

	"github.com/flowstate/flowstate/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk"
)

// valueSize is the size of every value Get returns: twice gRPC's default 4 MiB limit.
const valueSize = 8 << 20

func main() { sdk.Serve(&backend{inner: memstore.New()}) }

type backend struct{ inner *memstore.Plugin }

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

type keyed struct{ sdk.KeyedStateBackend }

// Get implements sdk.KeyedStateBackend with oversized values.
func (k *keyed) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	if len(out) > 0 {
		out[0] = bytes.Repeat([]byte{'x'}, valueSize) // one is enough to break the limit
	}
	return out, nil
}

// Command hangbackend is the hashmap state backend with an injected deadlock, for the
// runner's fault tests: a plugin that keeps its process alive and answers nothing more.
// Besides hashmap's options it takes:
//
//	hang-after-writes  the Write call (counted over the process) that deadlocks (0: never)
//	hang-marker        a file: the plugin deadlocks only while it does not exist, and
//	                   creates it when it does, so that a restarted process works
//
// Once deadlocked, every later call of every keyed backend blocks too, ignoring its context,
// as behind a mutex a plugin never releases.
package main

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
)

func main() { sdk.Serve(&backend{inner: hashmap.New()}) }

type backend struct {
	inner  *hashmap.Backend
	after  int64
	marker string
	writes atomic.Int64
	stuck  sync.RWMutex // held for writing, forever, once deadlocked
}

func (b *backend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "hangbackend", Version: "0.0.1"}
}

func (b *backend) Configure(ctx context.Context, opts sdk.Options) error {
	rest := sdk.Options{}
	for k, v := range opts {
		switch k {
		case "hang-after-writes":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return &sdk.OptionError{Option: k, Value: v, Err: err}
			}
			b.after = n
		case "hang-marker":
			b.marker = v
		default:
			rest[k] = v
		}
	}
	return b.inner.Configure(ctx, rest)
}

func (b *backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	kb, err := b.inner.CreateKeyedStateBackend(ctx, p)
	if err != nil {
		return nil, err
	}
	return &keyed{KeyedStateBackend: kb, b: b}, nil
}

// keyed passes every call through the plugin-wide lock, which a deadlock holds forever.
type keyed struct {
	sdk.KeyedStateBackend
	b *backend
}

func (k *keyed) Write(ctx context.Context, muts []sdk.Mutation) error {
	if n := k.b.writes.Add(1); n == k.b.after && k.b.marker != "" {
		if _, err := os.Stat(k.b.marker); os.IsNotExist(err) {
			if f, err := os.Create(k.b.marker); err == nil {
				f.Close()
				sdk.Logger().Warn("injected backend deadlock", "write", n)
				k.b.stuck.Lock() // never unlocked
			}
		}
	}
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	return k.KeyedStateBackend.Write(ctx, muts)
}

func (k *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	return k.KeyedStateBackend.Get(ctx, keys)
}

func (k *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	return k.KeyedStateBackend.Snapshot(ctx, opts)
}

func (k *keyed) Close() error {
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	return k.KeyedStateBackend.Close()
}

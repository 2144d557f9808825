// Command hangbackend is the hashmap state backend with an injected deadlock, for the
// runner's fault tests: a plugin that keeps its process alive and answers nothing more.
// Besides hashmap's options it takes:
//
//	hang-after-checkpoint  the first Write after the plugin was told that this checkpoint
//	                       (or a later one) completed deadlocks (0: never); an event of
//	                       the job, not a count of calls, which batching changes
//	hang-marker            a file: the plugin deadlocks only while it does not exist, and
//	                       creates it when it does, so that a restarted process works
//
// Once deadlocked, every later call of every keyed backend blocks too, ignoring its context,
// as behind a mutex a plugin never releases.
//
// It links, like a plugin, only the SDK (its contract and plugin end, sdk/server) and
// plugins/hashmap/hashmap: never the runtime nor the SDK's host end.
package main

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(&backend{inner: hashmap.New()}) }

type backend struct {
	inner    *hashmap.Backend
	after    int64
	marker   string
	notified atomic.Int64 // the newest checkpoint the plugin was told completed
	stuck    sync.RWMutex // held for writing, forever, once deadlocked
}

func (b *backend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "hangbackend", Version: "0.0.1"}
}

func (b *backend) Configure(ctx context.Context, opts sdk.Options) error {
	rest := sdk.Options{}
	for k, v := range opts {
		switch k {
		case "hang-after-checkpoint":
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
	if n := k.b.notified.Load(); k.b.after > 0 && n >= k.b.after && k.b.marker != "" {
		// O_EXCL: of the writes racing here, one creates the marker and deadlocks.
		if f, err := os.OpenFile(k.b.marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
			sdk.Logger().Warn("injected backend deadlock", "after_checkpoint", n)
			k.b.stuck.Lock() // never unlocked
		}
	}
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	return k.KeyedStateBackend.Write(ctx, muts)
}

// NotifyCheckpointComplete records the checkpoint, which arms the deadlock.
func (k *keyed) NotifyCheckpointComplete(ctx context.Context, id int64) error {
	k.b.stuck.RLock()
	defer k.b.stuck.RUnlock()
	for {
		n := k.b.notified.Load()
		if id <= n || k.b.notified.CompareAndSwap(n, id) {
			break
		}
	}
	return k.KeyedStateBackend.NotifyCheckpointComplete(ctx, id)
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

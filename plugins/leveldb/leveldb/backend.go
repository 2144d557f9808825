// Package leveldb is the leveldb state backend: each keyed backend keeps its state in its own
// embedded LSM store (github.com/syndtr/goleveldb) under a local working directory, so state
// may be much larger than memory, like Flink's EmbeddedRocksDBStateBackend. Working files are
// not durable: checkpoints are taken from a database snapshot while processing goes on,
// either as full snapshots in the canonical format (sdk.FormatCanonical) or, with the
// option incremental=true, as incremental ones (FormatIncremental) that upload only the
// keys written since the last completed checkpoint.
//
// It owns the backend's working databases, its full and incremental snapshots and its
// restores. As every plugin it imports only the SDK (sdk, sdk/bytesize, sdk/kvstream) and
// goleveldb, never the runtime, another plugin, or the SDK's plugin or host end
// (sdk/server, sdk/host); its main package links sdk/server.
package leveldb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	goleveldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
)

// Name is the plugin's name.
const Name = "leveldb"

// Version is the plugin's version.
const Version = "0.1.0"

// Backend is the leveldb state backend plugin.
type Backend struct {
	mu     sync.Mutex
	cfg    config
	memory processMemory
}

var _ sdk.StateBackend = (*Backend)(nil)

// New returns a leveldb state backend with the default configuration.
func New() *Backend { return &Backend{cfg: defaultConfig()} }

// OwnProcess tells the backend that it runs in a process of its own (the plugin's binary),
// whose Go memory limit it then sets from its configuration and the keyed backends it holds
// open (option memory-limit). A backend loaded into another process leaves that process's
// limit alone. Call it before Serve.
func (b *Backend) OwnProcess() {
	b.memory.mu.Lock()
	b.memory.own = true
	b.memory.mu.Unlock()
}

// PluginInfo returns the plugin's name and version.
func (b *Backend) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: Name, Version: Version} }

// Configure applies the options "localdir" (default DefaultLocalDir()), "block-cache-size"
// and "write-buffer-size" (human sizes such as "64mb"), "memory-limit" (a size, "0", or
// unset; see OwnProcess) and "incremental" ("true" for incremental checkpoints, see
// FormatIncremental). It creates the working directory.
func (b *Backend) Configure(ctx context.Context, opts sdk.Options) error {
	c, err := parseOptions(opts)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.cfg = c
	b.mu.Unlock()
	b.memory.configure(c.memoryLimit)
	return nil
}

// CreateKeyedStateBackend opens an empty database in a new directory
// <localdir>/<job>/<operator>-<subtask>-<random>, removed on Close.
func (b *Backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	b.mu.Lock()
	c := b.cfg
	b.mu.Unlock()
	name := fmt.Sprintf("leveldb keyed backend %s/%s subtask %d", p.JobID, p.OperatorID, p.Subtask)
	if p.KeyGroups.Start < 0 || p.KeyGroups.End <= p.KeyGroups.Start {
		return nil, fmt.Errorf("%s: invalid key group range %s: %w", name, p.KeyGroups, sdk.ErrInvalidArgument)
	}
	jobDir := filepath.Join(c.localDir, pathElem(p.JobID))
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: create directory %s: %w", name, jobDir, err)
	}
	dir := filepath.Join(jobDir, fmt.Sprintf("%s-%d-%s", pathElem(p.OperatorID), p.Subtask, randomSuffix()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: create directory %s: %w", name, dir, err)
	}
	db, err := goleveldb.OpenFile(dir, &opt.Options{
		BlockCacheCapacity:     c.blockCacheSize,
		WriteBuffer:            c.writeBufferSize,
		CompactionTableSize:    4 << 20,
		Filter:                 filter.NewBloomFilter(10),
		NoSync:                 true, // working state is not durable anyway; checkpoints are
		OpenFilesCacheCapacity: 128,
		ErrorIfExist:           true,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: open database in %s: %w", name, dir, err)
	}
	budget := backendBudget(c)
	b.memory.add(budget)
	kb := &keyed{params: p, name: name, dir: dir, db: db, batch: new(goleveldb.Batch), release: func() { b.memory.add(-budget) }}
	if c.incremental {
		kb.tracker = newTracker(trackedBudget(c) / 2)
	}
	return kb, nil
}

// pathElem makes s safe as one path element: characters other than letters, digits, '.',
// '_' and '-' become '_'.
func pathElem(s string) string {
	out := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
	if out == "" || out == "." || out == ".." {
		out = "_" + out
	}
	return out
}

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24
	return hex.EncodeToString(b[:])
}

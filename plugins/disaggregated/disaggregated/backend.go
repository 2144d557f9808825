package disaggregated

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/flowstate/flowstate/sdk"
)

// Name is the plugin's name.
const Name = "disaggregated"

// Version is the plugin's version.
const Version = "0.1.0"

// openFiles is how many tables each database keeps open (goleveldb's open files cache):
// an open table cannot be evicted from the cache, so few.
const openFiles = 16

// Backend is the disaggregated state backend plugin.
type Backend struct {
	mu      sync.Mutex
	cfg     config
	remote  Remote
	cache   *cache            // created by the first keyed backend after Configure
	remotes map[string]Remote // the other stores restored tables are on, by URI
}

var _ sdk.StateBackend = (*Backend)(nil)

// New returns a disaggregated state backend with the default configuration.
func New() *Backend { return &Backend{cfg: defaultConfig()} }

// PluginInfo returns the plugin's name and version.
func (b *Backend) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: Name, Version: Version} }

// Configure applies the options "remote" (default DefaultRemote()), "localdir" (default
// DefaultLocalDir()), "cache-size" (default 256mb), "block-cache-size" and
// "write-buffer-size" (human sizes such as "64mb"), and for an s3:// remote the s3.*
// options. It creates the working and remote directories, or checks that the remote bucket
// answers; a remote it cannot use is an *sdk.OptionError naming "remote", but a bucket
// whose store does not answer is an error of its own, which the restart strategy may
// outlast.
func (b *Backend) Configure(ctx context.Context, opts sdk.Options) error {
	c, remote, err := parseOptions(ctx, opts)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cache != nil && (b.cfg.localDir != c.localDir || b.cfg.cacheSize != c.cacheSize) {
		b.cache = nil // keyed backends already open keep theirs
	}
	b.cfg, b.remote = c, remote
	return nil
}

// setup returns the configuration, the remote store and the cache, creating the cache in
// <localdir>/cache-<random> (newProcessCache).
func (b *Backend) setup() (config, Remote, *cache, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.remote == nil {
		r, err := openRemote(context.Background(), b.cfg.remote, b.cfg.s3)
		if err != nil {
			return b.cfg, nil, nil, remoteError(b.cfg.remote, err)
		}
		b.remote = r
	}
	if b.cache == nil {
		c, err := newProcessCache(b.cfg.localDir, b.cfg.cacheSize)
		if err != nil {
			return b.cfg, nil, nil, err
		}
		b.cache = c
	}
	return b.cfg, b.remote, b.cache, nil
}

// remoteFor returns the remote store of uri: own when it is own's URI, else one opened
// with the configured s3.* options, once per process.
func (b *Backend) remoteFor(ctx context.Context, own Remote, uri string) (Remote, error) {
	if uri == own.String() {
		return own, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.remotes[uri]; r != nil {
		return r, nil
	}
	r, err := openRemote(ctx, uri, b.cfg.s3)
	if err != nil {
		return nil, err
	}
	if b.remotes == nil {
		b.remotes = map[string]Remote{}
	}
	b.remotes[uri] = r
	return r, nil
}

// CreateKeyedStateBackend opens an empty database whose local files are in a new directory
// <localdir>/<job>/<operator>-<subtask>-<random>, removed on Close, and whose tables go to
// <remote>/<job>/<operator>-<subtask>-<random>/.
func (b *Backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	name := fmt.Sprintf("disaggregated keyed backend %s/%s subtask %d", p.JobID, p.OperatorID, p.Subtask)
	if p.KeyGroups.Start < 0 || p.KeyGroups.End <= p.KeyGroups.Start {
		return nil, fmt.Errorf("%s: invalid key group range %s: %w", name, p.KeyGroups, sdk.ErrInvalidArgument)
	}
	c, remote, ca, err := b.setup()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	jobDir := filepath.Join(c.localDir, pathElem(p.JobID))
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: create directory %s: %w", name, jobDir, err)
	}
	kb := &keyed{params: p, name: name, cfg: c, remote: remote, b: b, cache: ca, jobDir: jobDir}
	pt, err := kb.openPart(p.KeyGroups, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	kb.setParts([]*part{pt})
	return kb, nil
}

// dbOptions are the goleveldb options of a keyed backend's database. NoSync is false so
// that goleveldb syncs its manifest after each record, which the store takes as the record
// boundary a snapshot may cut at; the store's Sync calls no fsync. A batch larger than the
// write buffer goes through the memtable like any other (DisableLargeBatchTransaction):
// goleveldb's own path for it, a transaction, keeps the database's write lock when the
// flush before it fails, so that one failed table write (the store unreachable) blocked
// every later write, and Close, for good.
func dbOptions(c config) *opt.Options {
	return &opt.Options{
		BlockCacheCapacity:           c.blockCacheSize,
		WriteBuffer:                  c.writeBufferSize,
		CompactionTableSize:          4 << 20,
		Filter:                       filter.NewBloomFilter(10),
		OpenFilesCacheCapacity:       openFiles,
		DisableLargeBatchTransaction: true,
	}
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

package disaggregated

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// Option keys the disaggregated backend accepts.
const (
	// OptionRemote is the remote store of the table files: file:///absolute/dir.
	OptionRemote = "remote"
	// OptionLocalDir is the local working directory: the databases' journals and
	// manifests, and the cache.
	OptionLocalDir = "localdir"
	// OptionCacheSize bounds the cache of table files of the plugin's process, in human
	// units ("256mb"); tables held open by a read come on top.
	OptionCacheSize = "cache-size"
	// OptionBlockCacheSize is the in-memory block cache of each keyed backend's database.
	OptionBlockCacheSize = "block-cache-size"
	// OptionWriteBufferSize is the memtable size of each keyed backend's database.
	OptionWriteBufferSize = "write-buffer-size"
)

// OptionKeys returns every option Configure accepts.
func OptionKeys() []string {
	return []string{OptionRemote, OptionLocalDir, OptionCacheSize, OptionBlockCacheSize, OptionWriteBufferSize}
}

// Defaults, sized for a small (2-core) machine.
const (
	// DefaultCacheSize is the default bound of the cache of table files.
	DefaultCacheSize = 256 << 20
	// DefaultBlockCacheSize is the default block cache per keyed backend.
	DefaultBlockCacheSize = 16 << 20
	// DefaultWriteBufferSize is the default memtable size per keyed backend.
	DefaultWriteBufferSize = 16 << 20
)

// DefaultLocalDir returns the default working directory, <os.TempDir()>/flowstate-disaggregated.
func DefaultLocalDir() string { return filepath.Join(os.TempDir(), "flowstate-disaggregated") }

// DefaultRemote returns the default remote store, a directory beside the default working
// directory: file://<os.TempDir()>/flowstate-disaggregated-remote. It is on the local
// disk, so it outlives the process but not the machine; configure remote for more.
func DefaultRemote() string {
	return "file://" + filepath.Join(os.TempDir(), "flowstate-disaggregated-remote")
}

// config is the backend's configuration.
type config struct {
	remote          string
	localDir        string
	cacheSize       int64
	blockCacheSize  int
	writeBufferSize int
}

func defaultConfig() config {
	return config{remote: DefaultRemote(), localDir: DefaultLocalDir(), cacheSize: DefaultCacheSize,
		blockCacheSize: DefaultBlockCacheSize, writeBufferSize: DefaultWriteBufferSize}
}

// parseOptions validates opts over the defaults, creating the working directory and the
// remote directory.
func parseOptions(opts sdk.Options) (config, Remote, error) {
	c := defaultConfig()
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return c, nil, err
	}
	if v, ok := opts[OptionLocalDir]; ok {
		if v == "" {
			return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: fmt.Errorf("want a directory")}
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: err}
		}
		c.localDir = abs
	}
	if v, ok := opts[OptionCacheSize]; ok {
		n, err := bytesize.Parse(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: OptionCacheSize, Value: v, Err: err}
		}
		if n < 0 {
			return c, nil, &sdk.OptionError{Option: OptionCacheSize, Value: v, Err: fmt.Errorf("want a size of 0 or more")}
		}
		c.cacheSize = n
	}
	for _, o := range []struct {
		key string
		dst *int
	}{{OptionBlockCacheSize, &c.blockCacheSize}, {OptionWriteBufferSize, &c.writeBufferSize}} {
		v, ok := opts[o.key]
		if !ok {
			continue
		}
		n, err := bytesize.Parse(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: o.key, Value: v, Err: err}
		}
		if n <= 0 || n > math.MaxInt32 {
			return c, nil, &sdk.OptionError{Option: o.key, Value: v, Err: fmt.Errorf("want a size between 1 byte and 2gb")}
		}
		*o.dst = int(n)
	}
	if v, ok := opts[OptionRemote]; ok {
		c.remote = v
	}
	remote, err := openRemote(c.remote)
	if err != nil {
		return c, nil, &sdk.OptionError{Option: OptionRemote, Value: c.remote, Err: err}
	}
	if err := os.MkdirAll(c.localDir, 0o755); err != nil {
		return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: c.localDir, Err: fmt.Errorf("create working directory: %w", err)}
	}
	return c, remote, nil
}

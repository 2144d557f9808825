package leveldb

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// Option keys the leveldb backend accepts (besides sdk.OptionIncremental).
const (
	// OptionLocalDir is the working directory of the keyed backends' databases.
	OptionLocalDir = "localdir"
	// OptionBlockCacheSize is the block cache of each keyed backend's database, in human
	// units ("32mb").
	OptionBlockCacheSize = "block-cache-size"
	// OptionWriteBufferSize is the memtable size of each keyed backend's database, in human
	// units ("16mb").
	OptionWriteBufferSize = "write-buffer-size"
	// OptionMemoryLimit is the Go memory limit of the plugin's process, in human units
	// ("256mb"); "0" leaves Go's own pacing; unset, it follows the open keyed backends (see
	// processMemory).
	OptionMemoryLimit = "memory-limit"
)

// minMemoryLimit is the smallest memory-limit other than 0: below it the collector would
// run all the time.
const minMemoryLimit = 16 << 20

// OptionKeys returns every option Configure accepts.
func OptionKeys() []string {
	return []string{OptionLocalDir, OptionBlockCacheSize, OptionWriteBufferSize, OptionMemoryLimit, sdk.OptionIncremental}
}

// Defaults, sized for a small (2-core) machine running a few keyed backends per plugin.
const (
	// DefaultBlockCacheSize is the default block cache per keyed backend.
	DefaultBlockCacheSize = 16 << 20
	// DefaultWriteBufferSize is the default memtable size per keyed backend.
	DefaultWriteBufferSize = 16 << 20
)

// DefaultLocalDir returns the default working directory, <os.TempDir()>/flowstate-leveldb.
func DefaultLocalDir() string { return filepath.Join(os.TempDir(), "flowstate-leveldb") }

// config is the backend's configuration.
type config struct {
	localDir        string
	blockCacheSize  int
	writeBufferSize int
	incremental     bool
	memoryLimit     int64 // autoMemoryLimit, 0 or a size
}

func defaultConfig() config {
	return config{localDir: DefaultLocalDir(), blockCacheSize: DefaultBlockCacheSize, writeBufferSize: DefaultWriteBufferSize, memoryLimit: autoMemoryLimit}
}

// parseOptions validates opts over the defaults.
func parseOptions(opts sdk.Options) (config, error) {
	c := defaultConfig()
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return c, err
	}
	if v, ok := opts[OptionLocalDir]; ok {
		if v == "" {
			return c, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: fmt.Errorf("want a directory")}
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			return c, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: err}
		}
		c.localDir = abs
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
			return c, &sdk.OptionError{Option: o.key, Value: v, Err: err}
		}
		if n <= 0 || n > math.MaxInt32 {
			return c, &sdk.OptionError{Option: o.key, Value: v, Err: fmt.Errorf("want a size between 1 byte and 2gb")}
		}
		*o.dst = int(n)
	}
	if v, ok := opts[OptionMemoryLimit]; ok {
		n, err := bytesize.Parse(v)
		if err != nil {
			return c, &sdk.OptionError{Option: OptionMemoryLimit, Value: v, Err: err}
		}
		if n != 0 && n < minMemoryLimit {
			return c, &sdk.OptionError{Option: OptionMemoryLimit, Value: v, Err: fmt.Errorf("want 0 (Go's own pacing) or a size of at least 16mb")}
		}
		c.memoryLimit = n
	}
	if v, ok := opts[sdk.OptionIncremental]; ok {
		inc, err := strconv.ParseBool(v)
		if err != nil {
			return c, &sdk.OptionError{Option: sdk.OptionIncremental, Value: v, Err: fmt.Errorf("want true or false")}
		}
		c.incremental = inc
	}
	if err := os.MkdirAll(c.localDir, 0o755); err != nil {
		return c, &sdk.OptionError{Option: OptionLocalDir, Value: c.localDir, Err: fmt.Errorf("create working directory: %w", err)}
	}
	return c, nil
}

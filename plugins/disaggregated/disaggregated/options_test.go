package disaggregated

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestOptions(t *testing.T) {
	if info := New().PluginInfo(); info.Name != "disaggregated" || info.Version == "" {
		t.Fatalf("PluginInfo = %+v", info)
	}
	dir := t.TempDir()
	c, _, err := parseOptions(sdk.Options{"localdir": filepath.Join(dir, "l"), "remote": "file://" + filepath.Join(dir, "r"), "cache-size": "1gb", "write-buffer-size": "4mb"})
	if err != nil || c.cacheSize != 1<<30 || c.writeBufferSize != 4<<20 || c.blockCacheSize != DefaultBlockCacheSize {
		t.Fatalf("parseOptions = %+v, %v", c, err)
	}
	if c, _, err := parseOptions(sdk.Options{"localdir": dir, "remote": filepath.Join(dir, "plain")}); err != nil || c.cacheSize != 256<<20 {
		t.Fatalf("defaults: %+v, %v; want a cache of 256 MiB", c, err)
	}
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		opts   sdk.Options
		option string
		says   string
	}{
		{sdk.Options{"remote": "s3://bucket/x"}, "remote", "file:// only"},
		{sdk.Options{"remote": "relative/dir"}, "remote", "absolute"},
		{sdk.Options{"remote": "file://" + filepath.Join(file, "sub")}, "remote", "a-file"},
		{sdk.Options{"cache-size": "lots"}, "cache-size", "lots"},
		{sdk.Options{"write-buffer-size": "0"}, "write-buffer-size", "between"},
		{sdk.Options{"localdir": ""}, "localdir", "directory"},
		{sdk.Options{"incremental": "true"}, "incremental", "unknown option"},
	}
	for _, c := range bad {
		opts := sdk.Options{"localdir": dir, "remote": "file://" + filepath.Join(dir, "r")}
		maps.Copy(opts, c.opts)
		err := New().Configure(bg, opts)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("Configure(%v) = %v; want an *sdk.OptionError for %q saying %q", c.opts, err, c.option, c.says)
		}
	}
}

package leveldb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

var bg = context.Background()

// testPlugin returns a leveldb backend configured with opts and a fresh local directory.
func testPlugin(t testing.TB, opts sdk.Options) sdk.StateBackend {
	t.Helper()
	all := sdk.Options{"localdir": t.TempDir()}
	for k, v := range opts {
		all[k] = v
	}
	b := New()
	if err := b.Configure(bg, all); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return b
}

func TestOptions(t *testing.T) {
	if info := New().PluginInfo(); info.Name != "leveldb" || info.Version == "" {
		t.Fatalf("PluginInfo = %+v", info)
	}
	dir := t.TempDir()
	good := []sdk.Options{
		{},
		{"incremental": "false"},
		{"incremental": "true"},
		{"block-cache-size": "8mb", "write-buffer-size": "64MiB"},
		{"block-cache-size": "1048576", "write-buffer-size": "4 mb", "localdir": filepath.Join(dir, "new", "dir")},
		{"memory-limit": "0"}, {"memory-limit": "512mb"},
	}
	for _, o := range good {
		b := New()
		if err := b.Configure(bg, o); err != nil {
			t.Fatalf("Configure(%v): %v", o, err)
		}
	}
	if c, err := parseOptions(sdk.Options{"block-cache-size": "8mb", "write-buffer-size": "64MiB", "localdir": dir, "incremental": "true"}); err != nil || c.blockCacheSize != 8<<20 || c.writeBufferSize != 64<<20 || c.localDir != dir || !c.incremental {
		t.Fatalf("parseOptions = %+v, %v", c, err)
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
		{sdk.Options{"incremental": "maybe"}, "incremental", "true or false"},
		{sdk.Options{"block-cache-size": "lots"}, "block-cache-size", "lots"},
		{sdk.Options{"write-buffer-size": "0"}, "write-buffer-size", "between"},
		{sdk.Options{"write-buffer-size": "64 furlongs"}, "write-buffer-size", "furlongs"},
		{sdk.Options{"memory-limit": "256"}, "memory-limit", "at least 16mb"},
		{sdk.Options{"memory-limit": "lots"}, "memory-limit", "lots"},
		{sdk.Options{"localdir": ""}, "localdir", "directory"},
		{sdk.Options{"localdir": filepath.Join(file, "sub")}, "localdir", "a-file"},
		{sdk.Options{"cache": "1"}, "cache", "unknown option"},
	}
	for _, c := range bad {
		err := New().Configure(bg, c.opts)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("Configure(%v) = %v; want an *sdk.OptionError for %q saying %q", c.opts, err, c.option, c.says)
		}
	}
}

func TestWorkingDirectory(t *testing.T) {
	local := t.TempDir()
	b := New()
	if err := b.Configure(bg, sdk.Options{"localdir": local}); err != nil {
		t.Fatal(err)
	}
	p := sdktest.Params("my/op", 3, 4)
	p.JobID = "word count"
	kb, err := b.CreateKeyedStateBackend(bg, p)
	if err != nil {
		t.Fatal(err)
	}
	kb2, err := b.CreateKeyedStateBackend(bg, p) // same subtask twice: distinct directories
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(local, "word_count", "my_op-3-*"))
	if len(dirs) != 2 {
		t.Fatalf("working directories %v, want two under %s/word_count/my_op-3-*", dirs, local)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "CURRENT")); err != nil {
		t.Fatalf("no database in %s: %v", dirs[0], err)
	}
	sdktest.MustWrite(t, kb, nil, []sdk.Mutation{{Key: sdktest.StateKey(100, "k"), Value: []byte("v")}})
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := kb2.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(local); err != nil || len(entries) != 0 {
		t.Fatalf("after Close the local directory holds %v (%v), want nothing", entries, err)
	}
	_, err = kb.Get(bg, [][]byte{sdktest.StateKey(100, "k")})
	if err == nil || !strings.Contains(err.Error(), local) {
		t.Fatalf("Get after Close: %v, want an error naming the directory", err)
	}
}

func TestUnwritableLocalDir(t *testing.T) {
	local := t.TempDir()
	b := New()
	if err := b.Configure(bg, sdk.Options{"localdir": local}); err != nil {
		t.Fatal(err)
	}
	p := sdktest.Params("op", 0, 1)
	jobDir := filepath.Join(local, p.JobID)
	if err := os.WriteFile(jobDir, nil, 0o644); err != nil { // a file where the job directory goes
		t.Fatal(err)
	}
	_, err := b.CreateKeyedStateBackend(bg, p)
	if err == nil || !strings.Contains(err.Error(), jobDir) {
		t.Fatalf("CreateKeyedStateBackend: %v, want an error naming %s", err, jobDir)
	}
}

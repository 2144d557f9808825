package fsstorage

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestOptions(t *testing.T) {
	tmp := t.TempDir()
	s := New()
	if err := s.Configure(context.Background(), sdk.Options{
		"dir": "file://" + tmp, "savepoint-dir": tmp + "/sp", "data-inline-threshold": "1 MiB", "write-buffer-size": "256kb",
	}); err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.Dir != tmp || c.SavepointDir != filepath.Join(tmp, "sp") || c.InlineThreshold != 1<<20 || c.WriteBufferSize != 256<<10 || !c.HighlyAvailable {
		t.Fatalf("config %+v", c)
	}
	d := New()
	if err := d.Configure(context.Background(), sdk.Options{}); err != nil {
		t.Fatal(err)
	}
	if c := d.Config(); c.InlineThreshold != 20<<10 || c.WriteBufferSize != 64<<10 || c.Dir != "" || c.Name != Name {
		t.Fatalf("defaults %+v", c)
	}
	if info := d.PluginInfo(); info.Name != "fsstorage" || info.Version == "" {
		t.Fatalf("PluginInfo %+v", info)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		kind       error
		text       string
	}{
		{"dir", "hdfs://nn:8020/x", sdk.ErrUnsupported, "hdfs"},
		{"dir", "", sdk.ErrInvalidArgument, "empty"},
		{"s3.path-style", "sometimes", nil, "sometimes"},
		{"data-inline-threshold", "2mb", sdk.ErrInvalidArgument, "out of range"},
		{"data-inline-threshold", "lots", nil, "lots"},
		{"write-buffer-size", "0", sdk.ErrInvalidArgument, "out of range"},
		{"write-buffer-size", "1gb", sdk.ErrInvalidArgument, "out of range"},
		{"state.checkpoints.dir", "/tmp", nil, "unknown option"},
		{"max-state-size", "5mb", nil, "unknown option"},
	} {
		err := New().Configure(context.Background(), sdk.Options{tc.key: tc.value})
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != tc.key || oe.Value != tc.value {
			t.Errorf("%s=%q: got %v, want an *sdk.OptionError naming it", tc.key, tc.value, err)
			continue
		}
		if tc.kind != nil && !errors.Is(err, tc.kind) {
			t.Errorf("%s=%q: %v does not wrap %v", tc.key, tc.value, err, tc.kind)
		}
		if !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s=%q: %q does not mention %q", tc.key, tc.value, err, tc.text)
		}
	}
}

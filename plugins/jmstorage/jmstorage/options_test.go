package jmstorage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestOptions(t *testing.T) {
	s := configured(t, sdk.Options{"max-state-size": "10mb", "data-inline-threshold": "0", "dir": "/tmp/x", "savepoint-dir": "file:///tmp/sp"})
	if s.cfg.maxStateSize != 10<<20 || s.cfg.inlineThreshold != 0 || s.cfg.dir != "/tmp/x" || s.cfg.savepointDir != "/tmp/sp" {
		t.Fatalf("config %+v", s.cfg)
	}
	d := configured(t, nil)
	if d.cfg.maxStateSize != 5242880 || d.cfg.inlineThreshold != 20<<10 || d.cfg.dir != "" {
		t.Fatalf("defaults %+v", d.cfg)
	}
	if info := d.PluginInfo(); info.Name != "jmstorage" || info.Version == "" {
		t.Fatalf("PluginInfo %+v", info)
	}
	for _, tc := range []struct{ key, value, text string }{
		{"max-state-size", "0", "out of range"},
		{"max-state-size", "big", "big"},
		{"data-inline-threshold", "2mb", "out of range"},
		{"dir", "s3://b/x", "unsupported"},
		{"write-buffer-size", "4kb", "unknown option"},
		{"state.checkpoint-storage", "jobmanager", "unknown option"},
	} {
		err := New().Configure(context.Background(), sdk.Options{tc.key: tc.value})
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != tc.key || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s=%q: got %v, want an *sdk.OptionError mentioning %q", tc.key, tc.value, err, tc.text)
		}
	}
}

package hashmap

import (
	"context"
	"errors"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

var bg = context.Background()

// testPlugin returns a configured hashmap backend.
func testPlugin(t testing.TB, opts sdk.Options) sdk.StateBackend {
	t.Helper()
	b := New()
	if err := b.Configure(bg, opts); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return b
}

func TestOptions(t *testing.T) {
	b := New()
	if info := b.PluginInfo(); info.Name != "hashmap" || info.Version == "" {
		t.Fatalf("PluginInfo = %+v", info)
	}
	for _, v := range []string{"true", "false"} {
		if err := b.Configure(bg, sdk.Options{"incremental": v}); err != nil {
			t.Fatalf("incremental=%s: %v", v, err)
		}
	}
	for opts, bad := range map[*sdk.Options]string{
		{"incremental": "sometimes"}:        "incremental",
		{"localdir": "/tmp"}:                "localdir",
		{"zzz": "1", "incremental": "true"}: "zzz",
	} {
		err := New().Configure(bg, *opts)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != bad {
			t.Fatalf("Configure(%v) = %v, want an *sdk.OptionError for %q", *opts, err, bad)
		}
	}
}

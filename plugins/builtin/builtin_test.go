package builtin_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/sdk"
)

// TestTable checks the registry against what each plugin says of itself.
func TestTable(t *testing.T) {
	if got, want := builtin.Names(), []string{"fsstorage", "hashmap", "jmstorage", "leveldb"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	kinds := map[string][]sdk.Kind{
		builtin.Hashmap:   {sdk.KindStateBackend},
		builtin.LevelDB:   {sdk.KindStateBackend},
		builtin.JMStorage: {sdk.KindCheckpointStorage},
		builtin.FSStorage: {sdk.KindCheckpointStorage},
	}
	constructors := builtin.Constructors()
	for name, want := range kinds {
		p, ok := builtin.Lookup(name)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", name)
		}
		if !slices.Equal(p.Kinds, want) {
			t.Errorf("%s: kinds %v, want %v", name, p.Kinds, want)
		}
		a, b := constructors[name](), constructors[name]()
		if info := a.PluginInfo(); info.Name != name || info != p.Info {
			t.Errorf("%s: PluginInfo %+v, registry says %+v", name, info, p.Info)
		}
		// Every option the registry lists is one Configure knows, and no other is.
		for _, o := range p.Options {
			err := a.Configure(context.Background(), sdk.Options{o: "\x00not a value"})
			var oe *sdk.OptionError
			if errors.As(err, &oe) && oe.Option == o && isUnknown(oe) {
				t.Errorf("%s: Configure does not know option %q, which the registry lists", name, o)
			}
		}
		err := b.Configure(context.Background(), sdk.Options{"no-such-option": "1"})
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != "no-such-option" {
			t.Errorf("%s: Configure of an unknown option = %v, want an *sdk.OptionError naming it", name, err)
		}
	}
	if _, ok := builtin.Lookup("boltdb"); ok {
		t.Errorf("Lookup(boltdb) found a plugin that is not built in")
	}
}

// isUnknown reports whether an option error is sdk.Options.CheckKnown's.
func isUnknown(oe *sdk.OptionError) bool {
	return oe.Err != nil && strings.HasPrefix(oe.Err.Error(), "unknown option")
}

// TestOptionConstants checks that the option names the runner's configuration uses are
// options of their plugins.
func TestOptionConstants(t *testing.T) {
	for plugin, options := range map[string][]string{
		builtin.LevelDB:   {builtin.LevelDBLocalDir, builtin.LevelDBBlockCacheSize, builtin.LevelDBWriteBufferSize},
		builtin.JMStorage: {builtin.JMStorageMaxStateSize},
		builtin.FSStorage: {builtin.FSStorageWriteBufferSize, builtin.FSStorageS3Endpoint, builtin.FSStorageS3AccessKey, builtin.FSStorageS3SecretKey, builtin.FSStorageS3PathStyle},
	} {
		p, _ := builtin.Lookup(plugin)
		for _, o := range options {
			if !slices.Contains(p.Options, o) {
				t.Errorf("%s does not accept option %q (it accepts %v)", plugin, o, p.Options)
			}
		}
	}
}

package builtin_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// TestTable checks runtime/builtins, what the runner knows of the built-ins without
// linking them, against what each plugin says of itself: its name, its kinds and the
// options its Configure accepts.
func TestTable(t *testing.T) {
	all := builtins.All()
	constructors := builtin.Constructors()
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	if got, want := names, slices.Sorted(maps.Keys(constructors)); !slices.Equal(got, want) {
		t.Fatalf("runtime/builtins names %v, the registry constructs %v", got, want)
	}
	if want := []string{"disaggregated", "fsstorage", "hashmap", "jmstorage", "leveldb"}; !slices.Equal(names, want) {
		t.Fatalf("built-ins %v, want %v", names, want)
	}
	optionKeys := map[string][]string{
		hashmap.Name:       hashmap.OptionKeys(),
		leveldb.Name:       leveldb.OptionKeys(),
		disaggregated.Name: disaggregated.OptionKeys(),
		jmstorage.Name:     jmstorage.OptionKeys(),
		fsstorage.Name:     fsstorage.OptionKeys(),
	}
	for _, p := range all {
		a, b := constructors[p.Name](), constructors[p.Name]()
		if info := a.PluginInfo(); info.Name != p.Name {
			t.Errorf("%s: PluginInfo names %q", p.Name, info.Name)
		}
		var kinds []string
		for _, k := range host.KindsOf(a) {
			kinds = append(kinds, string(k))
		}
		if !slices.Equal(kinds, p.Kinds) {
			t.Errorf("%s: the plugin implements %v, runtime/builtins says %v", p.Name, kinds, p.Kinds)
		}
		if got, want := slices.Sorted(slices.Values(p.Options)), slices.Sorted(slices.Values(optionKeys[p.Name])); !slices.Equal(got, want) {
			t.Errorf("%s: runtime/builtins lists options %v, the plugin's OptionKeys %v", p.Name, got, want)
		}
		// Every option listed is one Configure knows, and no other is.
		for _, o := range p.Options {
			err := a.Configure(context.Background(), sdk.Options{o: "\x00not a value"})
			var oe *sdk.OptionError
			if errors.As(err, &oe) && oe.Option == o && isUnknown(oe) {
				t.Errorf("%s: Configure does not know option %q, which runtime/builtins lists", p.Name, o)
			}
		}
		err := b.Configure(context.Background(), sdk.Options{"no-such-option": "1"})
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != "no-such-option" {
			t.Errorf("%s: Configure of an unknown option = %v, want an *sdk.OptionError naming it", p.Name, err)
		}
	}
	if _, ok := builtins.Lookup("boltdb"); ok {
		t.Errorf("Lookup(boltdb) found a plugin that is not built in")
	}
	if p, ok := builtins.Lookup(builtins.LevelDB); !ok || p.Name != builtins.LevelDB {
		t.Errorf("Lookup(leveldb) = %+v, %v", p, ok)
	}
}

// isUnknown reports whether an option error is sdk.Options.CheckKnown's.
func isUnknown(oe *sdk.OptionError) bool {
	return oe.Err != nil && strings.HasPrefix(oe.Err.Error(), "unknown option")
}

// TestConstants checks the names, kinds, options and defaults runtime/builtins spells out
// against the constants of the SDK and of the plugins.
func TestConstants(t *testing.T) {
	for _, c := range []struct{ leaf, own string }{
		{builtins.Hashmap, hashmap.Name},
		{builtins.LevelDB, leveldb.Name},
		{builtins.Disaggregated, disaggregated.Name},
		{builtins.LevelDBLocalDir, disaggregated.OptionLocalDir},
		{builtins.LevelDBBlockCacheSize, disaggregated.OptionBlockCacheSize},
		{builtins.LevelDBWriteBufferSize, disaggregated.OptionWriteBufferSize},
		{builtins.JMStorage, jmstorage.Name},
		{builtins.FSStorage, fsstorage.Name},
		{builtins.KindStateBackend, string(sdk.KindStateBackend)},
		{builtins.KindCheckpointStorage, string(sdk.KindCheckpointStorage)},
		{builtins.LevelDBLocalDir, leveldb.OptionLocalDir},
		{builtins.LevelDBBlockCacheSize, leveldb.OptionBlockCacheSize},
		{builtins.LevelDBWriteBufferSize, leveldb.OptionWriteBufferSize},
		{builtins.JMStorageMaxStateSize, jmstorage.OptionMaxStateSize},
		{builtins.FSStorageWriteBufferSize, fsstorage.OptionWriteBufferSize},
		{builtins.FSStorageS3Endpoint, fsstorage.OptionS3Endpoint},
		{builtins.FSStorageS3AccessKey, fsstorage.OptionS3AccessKey},
		{builtins.FSStorageS3SecretKey, fsstorage.OptionS3SecretKey},
		{builtins.FSStorageS3PathStyle, fsstorage.OptionS3PathStyle},
	} {
		if c.leaf != c.own {
			t.Errorf("runtime/builtins says %q where the plugin or the SDK says %q", c.leaf, c.own)
		}
	}
	if builtins.JMStorageDefaultMaxStateSize != jmstorage.DefaultMaxStateSize {
		t.Errorf("runtime/builtins: jmstorage's default max-state-size %d, the plugin's %d", builtins.JMStorageDefaultMaxStateSize, jmstorage.DefaultMaxStateSize)
	}
}

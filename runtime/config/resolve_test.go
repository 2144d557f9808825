package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// fakeKinds answers for third-party plugins and counts the launches.
type fakeKinds struct {
	kinds    map[string][]sdk.Kind
	launched []string
}

func (f *fakeKinds) of(name string) ([]sdk.Kind, error) {
	f.launched = append(f.launched, name)
	k, ok := f.kinds[name]
	if !ok {
		return nil, fmt.Errorf("no plugin binary flowstate-plugin-%s", name)
	}
	return k, nil
}

func newFake() *fakeKinds {
	return &fakeKinds{kinds: map[string][]sdk.Kind{
		"redis":  {sdk.KindStateBackend},
		"tikv":   {sdk.KindStateBackend, sdk.KindCheckpointStorage},
		"s3only": {sdk.KindCheckpointStorage},
	}}
}

func TestResolveBuiltinsLaunchNothing(t *testing.T) {
	f := newFake()
	for _, in := range []string{"", "state.backend.type: leveldb\nexecution.checkpointing.dir: /ck\n", "execution.checkpointing.storage: jobmanager\n"} {
		c := mustParse(t, in)
		if err := Resolve(c, f.of); err != nil {
			t.Fatal(err)
		}
	}
	wantEqual(t, "launched", len(f.launched), 0)
}

func TestResolveRules(t *testing.T) {
	cases := []struct {
		in, storage, source string
		fromBackend         bool
		warning             string
	}{
		{"state.backend.type: redis\n", "jmstorage", "default", false, ""},
		{"state.backend.type: redis\nexecution.checkpointing.dir: /ck\n", "fsstorage", "default: a checkpoint dir is set", false, ""},
		// A backend that also implements CheckpointStorage serves as the storage...
		{"state.backend.type: tikv\nexecution.checkpointing.dir: /ck\n", "tikv", "the state backend, which also implements CheckpointStorage", true, ""},
		// ...unless one is configured, which wins with a warning.
		{"state.backend.type: tikv\nexecution.checkpointing.storage: jobmanager\n", "jmstorage", "config file", false,
			`state backend "tikv" also implements CheckpointStorage, but execution.checkpointing.storage selects jmstorage; using jmstorage`},
		{"state.backend.type: tikv\nexecution.checkpointing.storage: tikv\n", "tikv", "config file", false, ""},
		{"execution.checkpointing.storage: s3only\n", "s3only", "config file", false, ""},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.in)
		f := newFake()
		if err := Resolve(c, f.of); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		wantEqual(t, tc.in+" storage", c.CheckpointStorage, tc.storage)
		wantEqual(t, tc.in+" source", c.CheckpointStorageSource(), tc.source)
		wantEqual(t, tc.in+" from backend", c.StorageFromBackend, tc.fromBackend)
		if tc.warning != "" {
			wantContains(t, strings.Join(c.Warnings, "\n"), tc.warning)
		} else if len(c.Warnings) != 0 {
			t.Errorf("%s: unexpected warnings %q", tc.in, c.Warnings)
		}
		if len(f.launched) > 1 {
			t.Errorf("%s: a plugin was launched more than once per name: %q", tc.in, f.launched)
		}
	}
}

func TestResolveDualBackendOptions(t *testing.T) {
	c := mustParse(t, `
state.backend.type: tikv
state.backend.tikv.pd: 10.0.0.1:2379
execution.checkpointing.tikv.prefix: ckpt/
execution.checkpointing.savepoint-dir: /sp
`)
	if err := Resolve(c, newFake().of); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "backend options", c.BackendOptions, sdk.Options{"pd": "10.0.0.1:2379"})
	wantEqual(t, "storage options", c.StorageOptions, sdk.Options{"prefix": "ckpt/", "savepoint-dir": "/sp"})
	wantEqual(t, "option key", c.OptionKey("tikv", "prefix"), "execution.checkpointing.tikv.prefix")
	wantEqual(t, "option key", c.OptionKey("tikv", "pd"), "state.backend.tikv.pd")
	wantEqual(t, "line", c.Line(c.OptionKey("tikv", "pd")), 3)
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		in    string
		is    error
		wants []string
	}{
		{"job.name: x\nstate.backend.type: nosuch\n", ErrUnknownPlugin,
			[]string{`config.yaml:2: state.backend.type: unknown plugin "nosuch": no plugin binary flowstate-plugin-nosuch`}},
		{"execution.checkpointing.storage: nosuch\n", ErrUnknownPlugin, []string{`config.yaml:1: execution.checkpointing.storage: unknown plugin "nosuch"`}},
		{"state.backend.type: fsstorage\n", ErrWrongKind,
			[]string{`config.yaml:1: state.backend.type: wrong plugin kind: "fsstorage" is a checkpoint storage, not a state backend (select it with execution.checkpointing.storage)`}},
		{"state.backend.type: s3only\n", ErrWrongKind, []string{`"s3only" is a checkpoint storage`}},
		{"state.checkpoint-storage: leveldb\n", ErrWrongKind,
			[]string{`config.yaml:1: state.checkpoint-storage: wrong plugin kind: "leveldb" is a state backend, not a checkpoint storage`}},
		{"execution.checkpointing.storage: redis\n", ErrWrongKind, []string{`"redis" is a state backend`}},
		{"execution.checkpointing.storage: filesystem\n", ErrBadValue,
			[]string{"config.yaml:1: execution.checkpointing.storage: bad value: filesystem checkpoint storage (fsstorage) needs a checkpoint directory"}},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.in)
		err := Resolve(c, newFake().of)
		if err == nil {
			t.Errorf("%s: want an error", tc.in)
			continue
		}
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.in, err, tc.is)
		}
		wantContains(t, err.Error(), tc.wants...)
	}
	// Without a launcher, third-party names are an error, not a panic.
	c := mustParse(t, "state.backend.type: redis\n")
	err := Resolve(c, nil)
	if !errors.Is(err, ErrUnknownPlugin) {
		t.Errorf("nil kindsOf: got %v", err)
	}
}

// Precedence: code over file over defaults.
func TestOverrides(t *testing.T) {
	c := mustParse(t, `
state.backend: filesystem
state.checkpoints.dir: /file/ck
state.backend.leveldb.localdir: /file/ldb
execution.checkpointing.savepoint-dir: /file/sp
plugins.dir: /file/plugins
`)
	// The file alone.
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "file backend", c.StateBackend, "hashmap")
	wantEqual(t, "file storage", c.CheckpointStorage, "fsstorage")
	wantEqual(t, "file source", c.StateBackendSource(), "config file")
	// Code wins: a backend set in code drops the storage the file's old value implied, so the
	// default rule applies (a dir is set: fsstorage).
	err := c.Apply(Overrides{StateBackend: "leveldb", BackendOptions: sdk.Options{"block-cache-size": "8mb"},
		SavepointDir: "/code/sp", PluginDir: "/code/plugins"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "code backend", c.StateBackend, "leveldb")
	wantEqual(t, "code source", c.StateBackendSource(), "code")
	wantEqual(t, "storage by default rule", c.CheckpointStorageSource(), "default: a checkpoint dir is set")
	wantEqual(t, "backend options: file and code", c.BackendOptions, sdk.Options{"localdir": "/file/ldb", "block-cache-size": "8mb"})
	wantEqual(t, "savepoint dir", c.Checkpointing.SavepointDir, "/code/sp")
	wantEqual(t, "line of a key set in code", c.Line("execution.checkpointing.savepoint-dir"), 0)
	wantEqual(t, "plugins dir", c.Plugins.Dir, "/code/plugins")
	// A storage set in code.
	if err := c.Apply(Overrides{CheckpointStorage: "jobmanager", StorageOptions: sdk.Options{"max-state-size": "1mb"}}); err != nil {
		t.Fatal(err)
	}
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "code storage", c.CheckpointStorage, "jmstorage")
	wantEqual(t, "code storage source", c.CheckpointStorageSource(), "code")
	wantEqual(t, "storage options", c.StorageOptions, sdk.Options{"dir": "/file/ck", "savepoint-dir": "/code/sp", "max-state-size": "1mb"})
	// Bad values in code.
	if err := c.Apply(Overrides{StateBackend: "Bad Name"}); !errors.Is(err, ErrBadValue) {
		t.Errorf("bad backend in code: %v", err)
	}
	if err := c.Apply(Overrides{CheckpointDir: "file://host/x"}); !errors.Is(err, ErrBadValue) {
		t.Errorf("bad dir in code: %v", err)
	}
}

// The string shortcut (a URI meaning filesystem storage at that path) as the Environment
// API applies it, and a rocksdb file whose storage depends on the dir.
func TestOverridesDirDecidesRocksDBStorage(t *testing.T) {
	c := mustParse(t, "state.backend: rocksdb\n")
	wantEqual(t, "without dir", c.CheckpointStorage, "jmstorage")
	if err := c.Apply(Overrides{CheckpointDir: "/code/ck"}); err != nil {
		t.Fatal(err)
	}
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "with a dir set in code", c.CheckpointStorage, "fsstorage")
	wantContains(t, c.CheckpointStorageSource(), "state.backend: rocksdb, with a checkpoint dir set")
	c = mustParse(t, "state.backend.type: hashmap\n")
	if err := c.Apply(Overrides{CheckpointStorage: "fsstorage", CheckpointDir: "s3://bucket/ck"}); err != nil {
		t.Fatal(err)
	}
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "shortcut", c.StorageOptions, sdk.Options{"dir": "s3://bucket/ck"})
}

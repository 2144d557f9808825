package explain

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/sdk"
)

const testFile = "/etc/flowstate/config.yaml"

// mustParse parses YAML as if it were the file /etc/flowstate/config.yaml.
func mustParse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(yaml), testFile)
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", yaml, err)
	}
	return c
}

// mustResolve parses and resolves with built-in plugins only.
func mustResolve(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c := mustParse(t, yaml)
	if err := config.Resolve(c, nil); err != nil {
		t.Fatalf("Resolve:\n%s\nerror: %v", yaml, err)
	}
	return c
}

// explainOf parses, resolves and explains YAML.
func explainOf(t *testing.T, yaml string) Explanation {
	t.Helper()
	return Config(mustResolve(t, yaml))
}

// thirdParty is the kinds of third-party plugins, as config.Resolve asks them: tikv serves
// both roles.
func thirdParty(name string) ([]sdk.Kind, error) {
	if name == "tikv" {
		return []sdk.Kind{sdk.KindStateBackend, sdk.KindCheckpointStorage}, nil
	}
	return nil, os.ErrNotExist
}

func wantContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in:\n%s", w, got)
		}
	}
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

// withMounts points the mount table at a fixture for one test.
func withMounts(t *testing.T, table string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mounts")
	if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	old := mountsFile
	mountsFile = p
	t.Cleanup(func() { mountsFile = old })
}

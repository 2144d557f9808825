package explain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/internal/testcheck"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/sdk"
)

const testFile = "/etc/flowstate/config.yaml"

// parsed parses YAML as if it were the file /etc/flowstate/config.yaml and, when resolve
// is set, resolves it with built-in plugins only.
func parsed(t *testing.T, yaml string, resolve bool) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(yaml), testFile)
	if err == nil && resolve {
		err = config.Resolve(c, nil)
	}
	if err != nil {
		t.Fatalf("parse (resolve %v):\n%s\nerror: %v", resolve, yaml, err)
	}
	return c
}

func mustParse(t *testing.T, yaml string) *config.Config   { t.Helper(); return parsed(t, yaml, false) }
func mustResolve(t *testing.T, yaml string) *config.Config { t.Helper(); return parsed(t, yaml, true) }

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

// The shared assertions, under the names these tests use.
var (
	wantContains = testcheck.Contains
	wantEqual    = testcheck.Equal
)

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

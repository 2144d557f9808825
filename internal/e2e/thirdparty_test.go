package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// TestThirdPartyPluginServesBothRoles runs the example boltdb plugin (its own module,
// built by make) as the state backend with no storage configured: it also becomes the
// checkpoint storage, plugins list shows both kinds, explain says so, and the word count
// survives kill -9 of the plugin process with exactly-once output.
func TestThirdPartyPluginServesBothRoles(t *testing.T) {
	out, err := runnerCmd(t, "plugins", "list", "--json", "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Name  string   `json:"name"`
		Kinds []string `json:"kinds"`
	}
	json.Unmarshal([]byte(out), &list)
	found := false
	for _, p := range list {
		if p.Name == "boltdb" {
			found = strings.Join(p.Kinds, ",") == "state-backend,checkpoint-storage"
		}
	}
	if !found {
		t.Fatalf("plugins list does not show boltdb with both kinds:\n%s", out)
	}

	s := newWordcount(t, "boltdb", "filesystem", 2<<20, 25000, map[string]any{"state.backend.boltdb.localdir": t.TempDir()})
	s.edit(t, map[string]any{"execution.checkpointing.storage": nil, "state.backend.leveldb.localdir": nil})

	out, err = runnerCmd(t, "config", "explain", "--json", "--config", s.config, "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var ex map[string]any
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, out)
	}
	if ex["state_backend"] != "boltdb" || ex["checkpoint_storage"] != "boltdb" {
		t.Fatalf("explain resolved backend %v and storage %v, want boltdb for both", ex["state_backend"], ex["checkpoint_storage"])
	}

	r := s.run(t)
	kills := killWhenRecovered(t, r, "boltdb", 2)
	if kills == 0 {
		t.Fatal("the job ended before the plugin could be killed")
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	if !strings.Contains(r.out.String(), "checkpoint storage boltdb") {
		t.Fatalf("the run did not use boltdb as its storage:\n%s", tail(r.out.String(), 30))
	}
	s.check(t, r.out.String())
}

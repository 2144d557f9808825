package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pinning tests prove issue 12's point 7: no unpinned or swappable plugin ever runs.

// swapForWrapper replaces plugin name in dir by a script that leaves marker behind and
// then runs the real binary (kept beside the directory): a changed binary that works, and
// tells when anything ran it.
func swapForWrapper(t *testing.T, dir, name, marker string) {
	t.Helper()
	bin := filepath.Join(dir, "flowstate-plugin-"+name)
	kept := filepath.Join(t.TempDir(), "flowstate-plugin-"+name)
	if err := os.Rename(bin, kept); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho ran " + name + " >> " + marker + "\nexec " + kept + " \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// pluginListing is one element of `plugins list --json`.
type pluginListing struct {
	Name   string   `json:"name"`
	Kinds  []string `json:"kinds"`
	SHA256 string   `json:"sha256"`
	Error  string   `json:"error"`
}

func listPlugins(t *testing.T, args ...string) map[string]pluginListing {
	t.Helper()
	out, err := runnerCmd(t, append([]string{"plugins", "list", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("plugins list: %v\n%s", err, out)
	}
	var list []pluginListing
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("plugins list --json: %v\n%s", err, out)
	}
	byName := map[string]pluginListing{}
	for _, l := range list {
		byName[l.Name] = l
	}
	return byName
}

// TestEveryCommandHonoursTheLock pins a third-party backend (boltdb, which config explain
// starts to learn its kinds) and fsstorage with `plugins lock`, then swaps both binaries:
// config explain, checkpoints list and run refuse to start, naming the mismatch and the lock
// file; plugins list --config lists both with the mismatch; and none of them ran either
// changed binary.
func TestEveryCommandHonoursTheLock(t *testing.T) {
	plugins := copyPlugins(t)
	s := newWordcount(t, "boltdb", "filesystem", 64<<10, 0, map[string]any{"state.backend.boltdb.localdir": t.TempDir()})
	if out, err := runnerCmd(t, "plugins", "lock", "--config", s.config, "--plugin-dir", plugins); err != nil {
		t.Fatalf("plugins lock: %v\n%s", err, out)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"boltdb", "fsstorage"} {
		swapForWrapper(t, plugins, name, marker)
	}
	for _, cmd := range [][]string{{"config", "explain"}, {"checkpoints", "list"}, {"run"}} {
		out, err := runnerCmd(t, append(cmd, "--config", s.config, "--plugin-dir", plugins)...)
		if err == nil {
			t.Fatalf("runner %s started with swapped plugins:\n%s", strings.Join(cmd, " "), out)
		}
		for _, want := range []string{"checksum mismatch", "flowstate.lock"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("runner %s: the refusal does not say %q: %v", strings.Join(cmd, " "), want, err)
			}
		}
	}
	list := listPlugins(t, "--config", s.config, "--plugin-dir", plugins)
	for _, name := range []string{"boltdb", "fsstorage"} {
		if !strings.Contains(list[name].Error, "checksum mismatch") {
			t.Errorf("plugins list --config shows %s without the mismatch: %+v", name, list[name])
		}
	}
	if list["hashmap"].Error == "" || !strings.Contains(list["hashmap"].Error, "not pinned") {
		t.Errorf("plugins list --config started hashmap, which the lock does not pin: %+v", list["hashmap"])
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a swapped plugin ran:\n%s", b)
	}
}

// TestLockRefusesUnpinnedPlugins: with a lock file in force, a plugin it does not pin is
// refused (here the configuration switches to leveldb after hashmap was locked), and the
// refusal says how to pin it.
func TestLockRefusesUnpinnedPlugins(t *testing.T) {
	plugins := copyPlugins(t)
	s := newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
	if out, err := runnerCmd(t, "plugins", "lock", "--config", s.config, "--plugin-dir", plugins); err != nil {
		t.Fatalf("plugins lock: %v\n%s", err, out)
	}
	s.edit(t, map[string]any{"state.backend.type": "leveldb"})
	out, err := runnerCmd(t, "run", "--config", s.config, "--plugin-dir", plugins)
	if err == nil {
		t.Fatalf("an unpinned plugin ran:\n%s", out)
	}
	for _, want := range []string{"plugin leveldb", "not pinned", "flowstate.lock", "runner plugins lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

// TestSymlinkedPlugins: a plugin reached through a symlink is checked where the symlink
// leads. A symlink into a directory writable by others is refused even when allowed out
// of the plugin directory; a symlink leaving the plugin directory is refused unless
// plugins.allow-outside-dir names the plugin, and then runs; a dangling symlink gets an
// error that says so.
func TestSymlinkedPlugins(t *testing.T) {
	// link replaces plugins/flowstate-plugin-hashmap by a symlink to a copy of it in dir.
	link := func(t *testing.T, plugins, dir string) string {
		t.Helper()
		bin := filepath.Join(plugins, "flowstate-plugin-hashmap")
		target := filepath.Join(dir, "flowstate-plugin-hashmap")
		if err := os.Rename(bin, target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, bin); err != nil {
			t.Fatal(err)
		}
		return target
	}
	run := func(t *testing.T, s *wordcountSetup, plugins string) (string, error) {
		return runnerCmd(t, "run", "--config", s.config, "--plugin-dir", plugins)
	}
	refused := func(t *testing.T, s *wordcountSetup, plugins string, wants ...string) {
		t.Helper()
		out, err := run(t, s, plugins)
		if err == nil {
			t.Fatalf("the symlinked plugin ran:\n%s", out)
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q: %v", want, err)
			}
		}
	}
	allow := func(t *testing.T, s *wordcountSetup) {
		t.Helper()
		s.add(t, map[string]any{"plugins.allow-outside-dir": "leveldb, hashmap"})
	}

	t.Run("into a directory writable by others", func(t *testing.T) {
		plugins, s := copyPlugins(t), newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
		open := filepath.Join(t.TempDir(), "open")
		if err := os.Mkdir(open, 0o755); err != nil {
			t.Fatal(err)
		}
		link(t, plugins, open)
		if err := os.Chmod(open, 0o777); err != nil {
			t.Fatal(err)
		}
		allow(t, s)
		refused(t, s, plugins, "plugin hashmap", open, "writable by others", "chmod o-w")
		// The same file, once the directory is closed to others, runs.
		if err := os.Chmod(open, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := run(t, s, plugins); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		s.check(t, "")
	})

	t.Run("leaving the plugin directory", func(t *testing.T) {
		plugins, s := copyPlugins(t), newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
		target := link(t, plugins, t.TempDir())
		refused(t, s, plugins, "plugin hashmap", target, "outside the plugin directory", "plugins.allow-outside-dir")
		allow(t, s)
		if out, err := run(t, s, plugins); err != nil {
			t.Fatalf("allowed by plugins.allow-outside-dir, the plugin still was refused: %v\n%s", err, out)
		}
		s.check(t, "")
	})

	t.Run("dangling", func(t *testing.T) {
		plugins, s := copyPlugins(t), newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
		target := link(t, plugins, t.TempDir())
		if err := os.Remove(target); err != nil {
			t.Fatal(err)
		}
		refused(t, s, plugins, "plugin hashmap", target, "does not exist", "dangling symlink")
	})

	t.Run("pinned at the file it leads to", func(t *testing.T) {
		// The lock pins the file the symlink leads to; pointing the symlink at another
		// file is a changed binary.
		plugins, s := copyPlugins(t), newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
		real := filepath.Join(plugins, "real")
		if err := os.Mkdir(real, 0o755); err != nil {
			t.Fatal(err)
		}
		target := link(t, plugins, real)
		if out, err := runnerCmd(t, "plugins", "lock", "--config", s.config, "--plugin-dir", plugins); err != nil {
			t.Fatalf("plugins lock: %v\n%s", err, out)
		}
		if lock := mustRead(t, filepath.Join(s.dir, "flowstate.lock")); !strings.Contains(lock, fileSHA(t, target)) {
			t.Fatalf("the lock does not pin the file the symlink leads to:\n%s", lock)
		}
		marker := filepath.Join(t.TempDir(), "ran")
		other := filepath.Join(plugins, "other")
		os.WriteFile(other, []byte("#!/bin/sh\necho ran >> "+marker+"\nexec "+target+" \"$@\"\n"), 0o755)
		bin := filepath.Join(plugins, "flowstate-plugin-hashmap")
		os.Remove(bin)
		if err := os.Symlink(other, bin); err != nil {
			t.Fatal(err)
		}
		refused(t, s, plugins, "checksum mismatch", other)
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the file the symlink was turned to ran")
		}
	})
}

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// copyPlugins copies the built plugins into a fresh directory the test may change.
func copyPlugins(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins")
	os.Mkdir(dir, 0o755)
	entries, err := os.ReadDir(testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, _ := os.Open(filepath.Join(testbin.PluginDir(t), e.Name()))
		dst, _ := os.OpenFile(filepath.Join(dir, e.Name()), os.O_CREATE|os.O_WRONLY, 0o755)
		io.Copy(dst, src)
		src.Close()
		dst.Close()
	}
	return dir
}

func fileSHA(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestPluginLockRefusesAChangedBinary pins the configured plugins with `plugins lock`, runs,
// then changes the backend binary: the run is refused with the file, both hashes and the
// lock file named.
func TestPluginLockRefusesAChangedBinary(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
	plugins := copyPlugins(t)
	if out, err := runnerCmd(t, "plugins", "lock", "--config", s.config, "--plugin-dir", plugins); err != nil {
		t.Fatalf("plugins lock: %v\n%s", err, out)
	}
	lock := mustRead(t, filepath.Join(s.dir, "flowstate.lock"))
	bin := filepath.Join(plugins, "flowstate-plugin-hashmap")
	want := fileSHA(t, bin)
	if !strings.Contains(lock, "hashmap:") || !strings.Contains(lock, want) || !strings.Contains(lock, "fsstorage:") || strings.Contains(lock, "leveldb") {
		t.Fatalf("lock file does not pin exactly the configured plugins:\n%s", lock)
	}
	r := startRunner(t, "run", "--config", s.config, "--plugin-dir", plugins)
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("run with matching pins: %v\n%s", err, r.out.String())
	}
	f, _ := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("tampered"))
	f.Close()
	got := fileSHA(t, bin)
	r = startRunner(t, "run", "--config", s.config, "--plugin-dir", plugins)
	if err := r.wait(t, time.Minute); err == nil {
		t.Fatalf("a changed plugin binary was run:\n%s", r.out.String())
	}
	for _, w := range []string{bin, want, got, "flowstate.lock"} {
		if !strings.Contains(r.out.String(), w) {
			t.Fatalf("refusal does not name %q:\n%s", w, tail(r.out.String(), 10))
		}
	}
}

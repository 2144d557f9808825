package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRemoveOrphans: a build directory whose owner process has ended is removed; one
// whose owner runs, and one that names no owner, are kept.
func TestRemoveOrphans(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{ // directory -> owner file content ("" for none)
		"flowstate-bin-ended":   strconv.Itoa(done.Process.Pid),
		"flowstate-bin-running": strconv.Itoa(os.Getpid()),
		"flowstate-bin-unowned": "",
	}
	for d, owner := range dirs {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(tmp, d, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	removeOrphans()
	for d := range dirs {
		_, err := os.Stat(filepath.Join(tmp, d))
		if gone := os.IsNotExist(err); gone != (d == "flowstate-bin-ended") {
			t.Errorf("%s: removed %v, want removed only when its owner ended", d, gone)
		}
	}
}

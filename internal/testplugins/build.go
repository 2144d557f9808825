// Package testplugins builds the small plugin binaries the protocol's tests start: mem
// (in-memory state backend and checkpoint storage), memstorage (storage only), memv3
// (protocol version 3 only), junk (prints to stdout instead of a handshake), crash (exits
// at once with stderr text) and noisy (floods stderr).
package testplugins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Names are the test plugins, by directory.
var Names = []string{"mem", "memstorage", "memv3", "junk", "crash", "noisy"}

// Prefix starts the file name of every plugin binary.
const Prefix = "flowstate-plugin-"

// Build builds every test plugin into dir as flowstate-plugin-NAME, in one go build.
func Build(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-o", tmp + string(filepath.Separator)}
	for _, n := range Names {
		args = append(args, "./"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = here
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building test plugins: %w\n%s", err, out)
	}
	for _, n := range Names {
		if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dir, Prefix+n)); err != nil {
			return fmt.Errorf("building test plugins: %w", err)
		}
	}
	return nil
}

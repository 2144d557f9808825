// Package testplugins builds the small plugin binaries the protocol's tests start: mem
// (in-memory state backend and checkpoint storage), memstorage (storage only), memv3
// (protocol version 3 only), junk (prints to stdout instead of a handshake), crash (exits
// at once with stderr text) and noisy (floods stderr); and, for the runner's fault tests,
// faultstorage (fsstorage with injected delays and hangs), bigmsg (a backend whose
// replies exceed gRPC's message limit) and hangbackend (hashmap with an injected deadlock).
package testplugins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Names are the test plugins Build builds, by directory.
var Names = []string{"mem", "memstorage", "memv3", "junk", "crash", "noisy"}

// FaultNames are the further test plugins the runner's fault tests use.
var FaultNames = []string{"faultstorage", "bigmsg", "hangbackend"}

// Prefix starts the file name of every plugin binary.
const Prefix = "flowstate-plugin-"

// Build builds every test plugin of Names into dir as flowstate-plugin-NAME, in one go
// build.
func Build(dir string) error { return BuildNamed(dir, Names...) }

// BuildNamed builds the named test plugins into dir as flowstate-plugin-NAME, in one go
// build.
func BuildNamed(dir string, names ...string) error {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-o", tmp + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = here
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building test plugins: %w\n%s", err, out)
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(tmp, n), filepath.Join(dir, Prefix+n)); err != nil {
			return fmt.Errorf("building test plugins: %w", err)
		}
	}
	return nil
}

// Package testplugins builds the small plugin binaries the runner's tests start: the SDK's
// own test plugins (Names, from sdk/internal/testplugins: mem, memstorage, memv3, junk,
// crash, noisy), and for the fault tests faultstorage (fsstorage with injected delays and
// hangs), bigmsg (a backend whose replies exceed gRPC's message limit), hangbackend
// (hashmap with an injected deadlock) and diebackend (hashmap that kills itself while it
// starts, is configured or restores), which live here because they wrap built-in plugins.
// A test package's TestMain builds the ones it starts with Main, and a test puts them, and
// any other plugin binaries, into a plugin directory of its own with Link and LinkAs.
//
// It builds them with go build and imports nothing of the repository, so a test that builds
// them links none of their code. The commands below it link, like a plugin, only the SDK's
// contract and plugin end and the built-in plugin they wrap: never the runtime nor the SDK's
// host end.
package testplugins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
)

// Names are the SDK's test plugins Build builds.
var Names = []string{"mem", "memstorage", "memv3", "junk", "crash", "noisy"}

// FaultNames are the further test plugins the runner's fault tests use.
var FaultNames = []string{"faultstorage", "bigmsg", "hangbackend", "diebackend"}

// Prefix starts the file name of every plugin binary.
const Prefix = "flowstate-plugin-"

// Build builds every test plugin of Names into dir as flowstate-plugin-NAME.
func Build(dir string) error { return BuildNamed(dir, Names...) }

// BuildNamed builds the named test plugins (of Names, FaultNames, or the SDK's refprev)
// into dir as flowstate-plugin-NAME, with one go build in each module that holds some: the
// SDK's or this one.
func BuildNamed(dir string, names ...string) error {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	bySource := map[string][]string{}
	for _, n := range names {
		src := here
		if slices.Contains(Names, n) || n == "refprev" {
			src = filepath.Join(here, "..", "..", "sdk", "internal", "testplugins")
		}
		bySource[src] = append(bySource[src], "./"+n)
	}
	for src, pkgs := range bySource {
		cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building test plugins %v in %s: %w\n%s", pkgs, src, err, out)
		}
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(dir, Prefix+n)); err != nil {
			return fmt.Errorf("building test plugin %s: %w", n, err)
		}
	}
	return nil
}

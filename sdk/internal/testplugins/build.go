// Package testplugins builds the small plugin binaries the SDK's tests start: mem (an
// in-memory state backend and checkpoint storage with hooks for errors and panics),
// memstorage (storage only), memv3 (protocol version 3 only, which no host speaks),
// refprev (the reference plugins of package ref, which pass the conformance kit, speaking
// the previous protocol: version 1 as plugins built before its additions speak it), junk
// (prints to stdout instead of a handshake), crash (exits at once with stderr text) and
// noisy (floods stderr). The runner's tests build them too, from this directory (see the
// repository's internal/testplugins).
//
// It builds them with go build and imports nothing of the repository. The commands link,
// as a plugin does, the SDK's contract and plugin end (sdk/server) with memstore or ref,
// never the host end (sdk/host, sdk/internal/client).
package testplugins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Names are the test plugins Build builds, by directory.
var Names = []string{"mem", "memstorage", "memv3", "refprev", "junk", "crash", "noisy"}

// Prefix starts the file name of every plugin binary.
const Prefix = "flowstate-plugin-"

// Build builds every test plugin of Names into dir as flowstate-plugin-NAME, in one go
// build.
func Build(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	pkgs := make([]string, len(Names))
	for i, n := range Names {
		pkgs[i] = "./" + n
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building test plugins: %w\n%s", err, out)
	}
	for _, n := range Names {
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(dir, Prefix+n)); err != nil {
			return fmt.Errorf("building test plugin %s: %w", n, err)
		}
	}
	return nil
}

// Command runner runs Flowstate's stateful stream jobs. It loads state backend and
// checkpoint storage plugins from a plugin directory and picks them from a configuration
// file.
//
// It links the runtime and the SDK's host end, and never a plugin's code: nothing under
// plugins/ (not even the registry plugins/builtin), nor goleveldb or minio-go, since it runs
// every plugin out of process; what it knows of the built-ins comes from runtime/builtins
// (internal/deps checks it).
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

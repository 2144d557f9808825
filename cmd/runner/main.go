// Command runner runs Flowstate's stateful stream jobs. It loads state backend and
// checkpoint storage plugins from a plugin directory and picks them from a configuration
// file.
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

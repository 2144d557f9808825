// Command crash writes a few stderr lines and exits at once with status 3.
//
// It links nothing of the SDK: it is not a plugin, only a process a host starts as one.
package main

import (
	"fmt"
	"os"
)

func main() {
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(os.Stderr, "crash line %d\n", i)
	}
	fmt.Fprintln(os.Stderr, "fatal: cannot open the state directory")
	os.Exit(3)
}

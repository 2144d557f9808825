package runner_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the jobs these tests run a runtime directory of this test process, where
// their control endpoints write their token files ($XDG_RUNTIME_DIR/flowstate), never the
// user's own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flowstate-runtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_RUNTIME_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

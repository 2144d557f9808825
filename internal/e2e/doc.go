// Package e2e holds end-to-end tests of the runner binary with real plugin processes:
// crashes (kill -9 of a plugin or of the runner) and recovery with exactly-once output.
//
// The tests wait for what they await, a line of a runner's output, a file, a process's
// end, through waitFor and its forms (wait_test.go, on internal/testwait), or by receiving
// it; no test sleeps a fixed time to let something happen.
//
// The package is tests only. They may import the runtime and the SDK to prepare and read
// what the runner writes, but never a plugin package: the plugins they run are binaries,
// built by internal/testbin and internal/testplugins, as a user's are.
package e2e

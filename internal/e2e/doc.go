// Package e2e holds end-to-end tests of the runner binary with real plugin processes:
// crashes (kill -9 of a plugin or of the runner) and recovery with exactly-once output.
package e2e

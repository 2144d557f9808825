package jetstream

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// StartTestServer starts the in-process server of the package's tests for its external
// tests, and returns its URL and a JetStream context connected to it.
func StartTestServer(t testing.TB) (string, jetstream.JetStream) {
	ts := startServer(t)
	return ts.ClientURL(), ts.js
}

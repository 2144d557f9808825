package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// TestJetStreamSourceLogsThroughTheRunner: the JetStream source of a built-in job gets the
// runner's logger. Without one it skipped undecodable messages and retention gaps in
// silence, though source.jetstream.on-decode-error and on-retention-gap say skip logs them
// (found by the e2e test TestJetStreamUndecodableMessage).
func TestJetStreamSourceLogsThroughTheRunner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	conf := "job:\n  type: wordcount\n  source: jetstream\n  output: " + filepath.Join(t.TempDir(), "out") +
		"\nnats:\n  servers: nats://127.0.0.1:4222\nsource:\n  jetstream:\n    stream: in\n    on-decode-error: skip\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.NewNullLogger()
	spec, err := withConnectors(cfg, jobs.Spec{Name: "wc", Type: "wordcount"}, log)
	if err != nil {
		t.Fatal(err)
	}
	src, ok := spec.Source.(*jetstream.Source)
	if !ok {
		t.Fatalf("source %T, want *jetstream.Source", spec.Source)
	}
	if src.Logger != log {
		t.Fatalf("the source's logger is %v, not the runner's", src.Logger)
	}
}

package explain

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainSaysWhatAStreamSourceAndSinkMean, and never prints a NATS secret.
func TestExplainSaysWhatAStreamSourceAndSinkMean(t *testing.T) {
	e := explainOf(t, `
job.source: jetstream
job.sink: jetstream
nats.servers: nats://n1:4222,nats://tok-in-url@n2:4222
nats.user: alice
nats.password: pw-secret-5
source.jetstream.stream: TEXT
source.jetstream.bounded: true
sink.jetstream.stream: COUNTS
sink.jetstream.subject: counts.{key}
`)
	for _, want := range []string{"JetStream stream TEXT", `user "alice"`, "ordered consumers", "never from acknowledgements", "is refused"} {
		if !strings.Contains(e.Source, want) {
			t.Errorf("source %q does not say %q", e.Source, want)
		}
	}
	for _, want := range []string{"JetStream stream COUNTS", "counts.{key}", "exactly once with no time bound", "at most 1000 messages", "flowstate.markers.<job>.<subtask>"} {
		if !strings.Contains(e.Sink, want) {
			t.Errorf("sink %q does not say %q", e.Sink, want)
		}
	}
	b, _ := json.Marshal(e)
	all := string(b) + e.Text()
	for _, secret := range []string{"pw-secret-5", "tok-in-url"} {
		if strings.Contains(all, secret) {
			t.Errorf("the explanation shows the secret %q", secret)
		}
	}
	f := explainOf(t, "job.input: in.txt\njob.output: out\n")
	if !strings.Contains(f.Source, "/etc/flowstate/in.txt") || !strings.Contains(f.Sink, "Part files in /etc/flowstate/out") {
		t.Errorf("file connectors: %q, %q", f.Source, f.Sink)
	}
}

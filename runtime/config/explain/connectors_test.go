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

// TestExplainRunners: explain says who runs the job, alone or in distributed mode, and in
// distributed mode where the group meets.
func TestExplainRunners(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"job.name: wc\n", []string{"This runner alone", "cluster.enabled: false"}},
		{"job.name: wc\ncluster.enabled: true\nnats.servers: nats://n1:4222\ncluster.replicas: 3\njob.parallelism: 4\n",
			[]string{"distributed mode", "nats://n1:4222", "KV bucket flowstate", "3 replica(s)", "4 per sub-topology", "stream flowstate-wc", "job wc.<task>", "job.lease.timeout"}},
	} {
		e := explainOf(t, tc.yaml)
		for _, w := range tc.want {
			if !strings.Contains(e.Runners, w) {
				t.Errorf("%q: runners %q does not say %q", tc.yaml, e.Runners, w)
			}
		}
	}
}

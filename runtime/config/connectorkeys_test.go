package config

import (
	"maps"
	"os"
	"strings"
	"testing"
	"time"
)

func TestConnectorKeys(t *testing.T) {
	c := mustParse(t, `
job.source: JetStream
job.sink: jetstream
nats.servers: nats://a:4222, nats://b:4222
nats.user: alice
nats.password: pw-secret-1
nats.tls.ca-file: ca.pem
nats.tls.cert-file: /abs/client.pem
nats.tls.key-file: client.key
nats.connect-timeout: 2s
source.jetstream.stream: IN
source.jetstream.subjects: in.a.>, in.b
source.jetstream.startup.mode: timestamp
source.jetstream.startup.timestamp: 2026-01-31T12:00:00Z
source.jetstream.bounded: true
source.jetstream.discovery.interval: 500ms
source.jetstream.on-decode-error: skip
source.jetstream.on-retention-gap: SKIP
sink.jetstream.stream: OUT
sink.jetstream.subject: counts.{key}
sink.jetstream.marker-subject: m.x
sink.jetstream.batch-size: 500
`)
	wantEqual(t, "job.source", c.Job.Source, ConnectorJetStream)
	wantEqual(t, "job.sink", c.Job.Sink, ConnectorJetStream)
	wantEqual(t, "nats", c.NATS, NATS{Servers: []string{"nats://a:4222", "nats://b:4222"}, User: "alice", Password: "pw-secret-1",
		CAFile: "/etc/flowstate/ca.pem", CertFile: "/abs/client.pem", KeyFile: "/etc/flowstate/client.key", ConnectTimeout: 2 * time.Second})
	wantEqual(t, "source", c.JetStreamSource, JetStreamSource{Stream: "IN", Subjects: []string{"in.a.>", "in.b"}, StartupMode: StartupTimestamp,
		StartupTime: time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC), Bounded: true, DiscoveryInterval: 500 * time.Millisecond,
		OnDecodeError: OnErrorSkip, OnRetentionGap: OnErrorSkip})
	wantEqual(t, "sink", c.JetStreamSink, JetStreamSink{Stream: "OUT", Subject: "counts.{key}", MarkerSubject: "m.x", BatchSize: 500})

	d := mustParse(t, "job.type: wordcount\n")
	wantEqual(t, "default source", d.Job.Source, ConnectorFile)
	wantEqual(t, "default sink settings", d.JetStreamSink, JetStreamSink{MarkerSubject: DefaultMarkerSubject, BatchSize: DefaultSinkBatchSize})
	wantEqual(t, "default source settings", d.JetStreamSource, JetStreamSource{StartupMode: StartupEarliest, DiscoveryInterval: 10 * time.Second,
		OnDecodeError: OnErrorFail, OnRetentionGap: OnErrorFail})
}

func TestConnectorKeysNeedTheirSettings(t *testing.T) {
	wantContains(t, parseErr(t, "job.source: jetstream\n"), "job.source: the jetstream source needs nats.servers", "needs source.jetstream.stream")
	wantContains(t, parseErr(t, "job.sink: jetstream\nnats.servers: nats://x:1\n"), "needs sink.jetstream.stream", "needs sink.jetstream.subject")
	wantContains(t, parseErr(t, "job.source: jetstream\nnats.servers: x\nsource.jetstream.stream: S\nsource.jetstream.startup.mode: sequence\n"),
		"needs source.jetstream.startup.sequence")
	wantContains(t, parseErr(t, "source.jetstream.startup.timestamp: yesterday\n"), "RFC 3339")
	wantContains(t, parseErr(t, "sink.jetstream.batch-size: 1\n"), "from 2 to")
	wantContains(t, parseErr(t, "source.jetstream.startup.mode: newest\n"), "earliest, latest, timestamp or sequence")
	wantContains(t, parseErr(t, "nats.tls.cert-file: c\n"), "go together")
}

// TestNATSSecretsAreNeverPrinted: messages about the secret keys name them, never their
// values, and -D overrides print them masked.
func TestNATSSecretsAreNeverPrinted(t *testing.T) {
	msg := parseErr(t, "nats.user: u\nnats.password: pw-secret-2\nnats.token: tok-secret-3\n")
	wantContains(t, msg, "one way to authenticate")
	msg += parseErr(t, "nats.password: pw-secret-4\n")
	wantContains(t, msg, "nats.password is set without nats.user")
	_, err := ParseWith([]byte("nats.user: u\n"), testFile, []Override{{Flag: FlagDynamic, Key: KeyNATSPassword, Value: "   "}})
	if err != nil {
		msg += err.Error()
	}
	for _, secret := range []string{"pw-secret-2", "tok-secret-3", "pw-secret-4"} {
		if strings.Contains(msg, secret) {
			t.Errorf("a message shows the secret %q:\n%s", secret, msg)
		}
	}
	for _, key := range []string{KeyNATSPassword, KeyNATSToken} {
		o := Override{Flag: FlagDynamic, Key: key, Value: "s3cr3t"}
		if strings.Contains(o.String(), "s3cr3t") {
			t.Errorf("override %s prints its value", o)
		}
	}
}

// TestDocsListEveryConnectorKey: docs/configuration.md has a row for each connector key
// and each key of distributed mode.
func TestDocsListEveryConnectorKey(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := maps.Clone(connectorKeys)
	maps.Copy(keys, clusterKeys)
	for key := range keys {
		if !strings.Contains(string(doc), "\n| `"+key+"` |") {
			t.Errorf("docs/configuration.md has no row for %s", key)
		}
	}
}

package jetstream

import (
	"fmt"

	"github.com/flowstate/flowstate/runtime/config"
)

// ConnFromConfig returns the connection the nats.* keys describe.
func ConnFromConfig(n config.NATS) Conn {
	return Conn{Servers: n.Servers, User: n.User, Password: n.Password, Token: n.Token, NKeyFile: n.NKeyFile,
		CredsFile: n.CredsFile, CAFile: n.CAFile, CertFile: n.CertFile, KeyFile: n.KeyFile, ConnectTimeout: n.ConnectTimeout}
}

// SourceFromConfig returns the source the nats.* and source.jetstream.* keys of c
// describe; an error names the key that is wrong.
func SourceFromConfig(c *config.Config) (*Source, error) {
	j := c.JetStreamSource
	s := &Source{
		Conn: ConnFromConfig(c.NATS), Stream: j.Stream, Subjects: j.Subjects, StartMode: j.StartupMode,
		StartTime: j.StartupTime, StartSequence: j.StartupSequence, Bounded: j.Bounded, DiscoveryInterval: j.DiscoveryInterval,
		SkipDecodeErrors: j.OnDecodeError == config.OnErrorSkip, SkipRetentionGaps: j.OnRetentionGap == config.OnErrorSkip,
		Keys: &SourceKeys{Stream: config.KeySourceStream, Subjects: config.KeySourceSubjects, OnDecodeError: config.KeySourceOnDecode, OnRetentionGap: config.KeySourceOnGap},
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.File, err)
	}
	return s, nil
}

// SinkFromConfig returns the sink the nats.* and sink.jetstream.* keys of c describe, for
// job (whose name names the marker subjects); an error names the key that is wrong.
func SinkFromConfig(c *config.Config, job string) (*Sink, error) {
	j := c.JetStreamSink
	s := &Sink{
		Conn: ConnFromConfig(c.NATS), Stream: j.Stream, Subject: j.Subject, MarkerPrefix: j.MarkerSubject, BatchSize: j.BatchSize, Job: job,
		Keys: &SinkKeys{Stream: config.KeySinkStream, Subject: config.KeySinkSubject, MarkerSubject: config.KeySinkMarkerSubject, BatchSize: config.KeySinkBatchSize},
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.File, err)
	}
	return s, nil
}

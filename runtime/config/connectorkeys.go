package config

import (
	"fmt"
	"strings"
	"time"
)

// Keys of the built-in jobs' connectors: which source and sink (job.source, job.sink), the
// NATS connection (nats.*) and the JetStream source and sink (source.jetstream.*,
// sink.jetstream.*). All are Flowstate's own.
const (
	KeyJobSource          = "job.source"
	KeyJobSink            = "job.sink"
	KeyNATSServers        = "nats.servers"
	KeyNATSUser           = "nats.user"
	KeyNATSPassword       = "nats.password"
	KeyNATSToken          = "nats.token"
	KeyNATSNKeyFile       = "nats.nkey-file"
	KeyNATSCredsFile      = "nats.creds-file"
	KeyNATSCAFile         = "nats.tls.ca-file"
	KeyNATSCertFile       = "nats.tls.cert-file"
	KeyNATSKeyFile        = "nats.tls.key-file"
	KeyNATSConnectTimeout = "nats.connect-timeout"
	KeySourceStream       = "source.jetstream.stream"
	KeySourceSubjects     = "source.jetstream.subjects"
	KeySourceStartupMode  = "source.jetstream.startup.mode"
	KeySourceStartupTime  = "source.jetstream.startup.timestamp"
	KeySourceStartupSeq   = "source.jetstream.startup.sequence"
	KeySourceBounded      = "source.jetstream.bounded"
	KeySourceDiscovery    = "source.jetstream.discovery.interval"
	KeySourceOnDecode     = "source.jetstream.on-decode-error"
	KeySourceOnGap        = "source.jetstream.on-retention-gap"
	KeySinkStream         = "sink.jetstream.stream"
	KeySinkSubject        = "sink.jetstream.subject"
	KeySinkMarkerSubject  = "sink.jetstream.marker-subject"
	KeySinkBatchSize      = "sink.jetstream.batch-size"
)

// Values of job.source and job.sink.
const (
	ConnectorFile      = "file"
	ConnectorJetStream = "jetstream"
)

// Values of source.jetstream.startup.mode.
const (
	StartupEarliest  = "earliest"
	StartupLatest    = "latest"
	StartupTimestamp = "timestamp"
	StartupSequence  = "sequence"
)

// Values of source.jetstream.on-decode-error and on-retention-gap.
const (
	OnErrorFail = "fail"
	OnErrorSkip = "skip"
)

// Defaults of the connector keys.
const (
	DefaultDiscoveryInterval = 10 * time.Second
	DefaultMarkerSubject     = "flowstate.markers"
	DefaultSinkBatchSize     = 1000
	DefaultNATSTimeout       = 5 * time.Second
)

var connectorKeys = map[string]keyDef{
	KeyJobSource:          {kind: kindEnum, values: []string{ConnectorFile, ConnectorJetStream}},
	KeyJobSink:            {kind: kindEnum, values: []string{ConnectorFile, ConnectorJetStream}},
	KeyNATSServers:        {kind: kindString},
	KeyNATSUser:           {kind: kindString},
	KeyNATSPassword:       {kind: kindString},
	KeyNATSToken:          {kind: kindString},
	KeyNATSNKeyFile:       {kind: kindPath},
	KeyNATSCredsFile:      {kind: kindPath},
	KeyNATSCAFile:         {kind: kindPath},
	KeyNATSCertFile:       {kind: kindPath},
	KeyNATSKeyFile:        {kind: kindPath},
	KeyNATSConnectTimeout: {kind: kindDuration},
	KeySourceStream:       {kind: kindString},
	KeySourceSubjects:     {kind: kindString},
	KeySourceStartupMode:  {kind: kindEnum, values: []string{StartupEarliest, StartupLatest, StartupTimestamp, StartupSequence}},
	KeySourceStartupTime:  {kind: kindString},
	KeySourceStartupSeq:   {kind: kindInt, min: 1, max: 1<<63 - 1},
	KeySourceBounded:      {kind: kindBool},
	KeySourceDiscovery:    {kind: kindDuration},
	KeySourceOnDecode:     {kind: kindEnum, values: []string{OnErrorFail, OnErrorSkip}},
	KeySourceOnGap:        {kind: kindEnum, values: []string{OnErrorFail, OnErrorSkip}},
	KeySinkStream:         {kind: kindString},
	KeySinkSubject:        {kind: kindString},
	KeySinkMarkerSubject:  {kind: kindString},
	KeySinkBatchSize:      {kind: kindInt, min: 2, max: 1 << 20},
}

func init() {
	for k, d := range connectorKeys {
		currentKeys[k] = d
	}
}

// NATS holds the nats.* settings: how the JetStream connectors reach NATS.
type NATS struct {
	// Servers are the nats:// URLs (nats.servers, comma-separated).
	Servers []string
	// User and Password, Token, NKeyFile or CredsFile authenticate (at most one way).
	// Password and Token are secrets: nothing prints them.
	User, Password, Token, NKeyFile, CredsFile string
	// CAFile, CertFile and KeyFile are the TLS files (nats.tls.*).
	CAFile, CertFile, KeyFile string
	// ConnectTimeout bounds each connection attempt (default 5s).
	ConnectTimeout time.Duration
}

// JetStreamSource holds the source.jetstream.* settings.
type JetStreamSource struct {
	Stream string
	// Subjects are the subject filters; none reads every subject of the stream.
	Subjects []string
	// StartupMode is StartupEarliest (default), StartupLatest, StartupTimestamp or
	// StartupSequence; StartupTime and StartupSequence go with the last two.
	StartupMode     string
	StartupTime     time.Time
	StartupSequence uint64
	// Bounded stops at the stream's last sequence when the run starts.
	Bounded bool
	// DiscoveryInterval is how often new partition subjects are looked for (default 10s).
	DiscoveryInterval time.Duration
	// OnDecodeError and OnRetentionGap are OnErrorFail (default) or OnErrorSkip.
	OnDecodeError, OnRetentionGap string
}

// JetStreamSink holds the sink.jetstream.* settings.
type JetStreamSink struct {
	Stream string
	// Subject is fixed, or a template with {key}.
	Subject string
	// MarkerSubject prefixes the writers' marker subjects (default "flowstate.markers").
	MarkerSubject string
	// BatchSize is the most messages of one atomic batch, marker included (default 1000).
	BatchSize int
}

func defaultConnectors(c *Config) {
	c.Job.Source, c.Job.Sink = ConnectorFile, ConnectorFile
	c.NATS.ConnectTimeout = DefaultNATSTimeout
	c.JetStreamSource = JetStreamSource{StartupMode: StartupEarliest, DiscoveryInterval: DefaultDiscoveryInterval,
		OnDecodeError: OnErrorFail, OnRetentionGap: OnErrorFail}
	c.JetStreamSink = JetStreamSink{MarkerSubject: DefaultMarkerSubject, BatchSize: DefaultSinkBatchSize}
}

// setConnector applies the value of a connector key; false when key is none.
func (p *parser) setConnector(key string, v any) bool {
	c := p.c
	switch key {
	case KeyJobSource:
		c.Job.Source = v.(string)
	case KeyJobSink:
		c.Job.Sink = v.(string)
	case KeyNATSServers:
		c.NATS.Servers = splitList(v.(string))
		for _, s := range c.NATS.Servers {
			if strings.ContainsAny(s, " \t") {
				p.badValue(key, "want nats:// URLs separated by commas")
			}
		}
	case KeyNATSUser:
		c.NATS.User = v.(string)
	case KeyNATSPassword:
		c.NATS.Password = v.(string)
	case KeyNATSToken:
		c.NATS.Token = v.(string)
	case KeyNATSNKeyFile:
		c.NATS.NKeyFile = v.(string)
	case KeyNATSCredsFile:
		c.NATS.CredsFile = v.(string)
	case KeyNATSCAFile:
		c.NATS.CAFile = v.(string)
	case KeyNATSCertFile:
		c.NATS.CertFile = v.(string)
	case KeyNATSKeyFile:
		c.NATS.KeyFile = v.(string)
	case KeyNATSConnectTimeout:
		c.NATS.ConnectTimeout = v.(time.Duration)
		if c.NATS.ConnectTimeout <= 0 {
			p.badValue(key, "the connect timeout must be positive")
		}
	case KeySourceStream:
		c.JetStreamSource.Stream = v.(string)
	case KeySourceSubjects:
		c.JetStreamSource.Subjects = splitList(v.(string))
	case KeySourceStartupMode:
		c.JetStreamSource.StartupMode = v.(string)
	case KeySourceStartupTime:
		t, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			p.badValue(key, "want an RFC 3339 time, such as 2026-01-31T12:00:00Z")
		}
		c.JetStreamSource.StartupTime = t
	case KeySourceStartupSeq:
		c.JetStreamSource.StartupSequence = uint64(v.(int64))
	case KeySourceBounded:
		c.JetStreamSource.Bounded = v.(bool)
	case KeySourceDiscovery:
		c.JetStreamSource.DiscoveryInterval = v.(time.Duration)
		if c.JetStreamSource.DiscoveryInterval <= 0 {
			p.badValue(key, "the discovery interval must be positive")
		}
	case KeySourceOnDecode:
		c.JetStreamSource.OnDecodeError = v.(string)
	case KeySourceOnGap:
		c.JetStreamSource.OnRetentionGap = v.(string)
	case KeySinkStream:
		c.JetStreamSink.Stream = v.(string)
	case KeySinkSubject:
		c.JetStreamSink.Subject = v.(string)
	case KeySinkMarkerSubject:
		c.JetStreamSink.MarkerSubject = v.(string)
	case KeySinkBatchSize:
		c.JetStreamSink.BatchSize = int(v.(int64))
	default:
		return false
	}
	return true
}

// set reports whether key is set in the file or on the command line.
func (p *parser) isSet(key string) bool { return p.c.lines[key] != 0 || p.c.flags[key] != "" }

// checkConnectors applies the rules between the connector keys: what the chosen source and
// sink need, and no secret printed in any message.
func (p *parser) checkConnectors() {
	c := p.c
	need := func(at, what, key string) {
		p.errs.addAt(c.File, p.spellingOf(at), fmt.Errorf("%w: %s: %s needs %s", ErrBadValue, c.Written(at), what, key))
	}
	js := c.Job.Source == ConnectorJetStream || c.Job.Sink == ConnectorJetStream
	if js && len(c.NATS.Servers) == 0 {
		if c.Job.Source == ConnectorJetStream {
			need(KeyJobSource, "the jetstream source", KeyNATSServers)
		} else {
			need(KeyJobSink, "the jetstream sink", KeyNATSServers)
		}
	}
	if c.Job.Source == ConnectorJetStream {
		s := c.JetStreamSource
		if s.Stream == "" {
			need(KeyJobSource, "the jetstream source", KeySourceStream)
		}
		if s.StartupMode == StartupTimestamp && !p.isSet(KeySourceStartupTime) {
			need(KeySourceStartupMode, "startup mode timestamp", KeySourceStartupTime)
		}
		if s.StartupMode == StartupSequence && !p.isSet(KeySourceStartupSeq) {
			need(KeySourceStartupMode, "startup mode sequence", KeySourceStartupSeq)
		}
	}
	if c.Job.Sink == ConnectorJetStream {
		if c.JetStreamSink.Stream == "" {
			need(KeyJobSink, "the jetstream sink", KeySinkStream)
		}
		if c.JetStreamSink.Subject == "" {
			need(KeyJobSink, "the jetstream sink", KeySinkSubject)
		}
	}
	n := c.NATS
	ways := 0
	for _, set := range []bool{n.User != "" || n.Password != "", n.Token != "", n.NKeyFile != "", n.CredsFile != ""} {
		if set {
			ways++
		}
	}
	switch {
	case ways > 1:
		p.errs.addAt(c.File, p.spellingOf(KeyNATSServers), fmt.Errorf("%w: give one way to authenticate to NATS: %s and %s, %s, %s or %s",
			ErrConflict, KeyNATSUser, KeyNATSPassword, KeyNATSToken, KeyNATSNKeyFile, KeyNATSCredsFile))
	case n.Password != "" && n.User == "":
		p.errs.addAt(c.File, p.spellingOf(KeyNATSPassword), fmt.Errorf("%w: %s is set without %s", ErrBadValue, KeyNATSPassword, KeyNATSUser))
	}
	if (n.CertFile == "") != (n.KeyFile == "") {
		p.errs.addAt(c.File, p.spellingOf(KeyNATSCertFile), fmt.Errorf("%w: %s and %s go together", ErrBadValue, KeyNATSCertFile, KeyNATSKeyFile))
	}
}

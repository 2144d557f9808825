package jetstream

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testServer is an in-process NATS server with JetStream, for unit tests only (the e2e
// tests start the real binary as its own process).
type testServer struct {
	*server.Server
	nc *nats.Conn
	js jetstream.JetStream
}

// startServer starts a server on a free port of 127.0.0.1, its store in a temporary
// directory; configure may change its options (authorization, TLS, limits).
func startServer(t testing.TB, configure ...func(*server.Options)) *testServer {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	for _, c := range configure {
		c(o)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the in-process NATS server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	ts := &testServer{Server: s}
	if o.Username == "" && o.Authorization == "" && len(o.Users) == 0 && len(o.Nkeys) == 0 && len(o.TrustedOperators) == 0 && o.TLSConfig == nil {
		if ts.nc, err = nats.Connect(s.ClientURL()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ts.nc.Close)
		if ts.js, err = jetstream.New(ts.nc); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// conn is how the connectors reach the server.
func (s *testServer) conn() Conn { return Conn{Servers: []string{s.ClientURL()}} }

// stream creates a stream.
func (s *testServer) stream(t testing.TB, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	st, err := s.js.CreateStream(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// publish publishes each payload to subject and returns their sequences.
func (s *testServer) publish(t testing.TB, subject string, payloads ...string) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, p := range payloads {
		ack, err := s.js.Publish(context.Background(), subject, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ack.Sequence)
	}
	return seqs
}

// stored is a message of a stream as a checker reads it back.
type stored struct {
	Subject string
	Seq     uint64
	Data    string
}

// read returns every message of stream whose subject starts with prefix, in order, read
// by sequence with plain gets (not the connectors' code).
func (s *testServer) read(t testing.TB, streamName, prefix string) []stored {
	t.Helper()
	ctx := context.Background()
	st, err := s.js.Stream(ctx, streamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted
		}
		if strings.HasPrefix(m.Subject, prefix) {
			out = append(out, stored{m.Subject, m.Sequence, string(m.Data)})
		}
	}
	return out
}

func (s stored) String() string { return fmt.Sprintf("%d %s %q", s.Seq, s.Subject, s.Data) }

// Package jetstream holds Flowstate's NATS JetStream connectors: a replayable source that
// reads a stream's partition subjects from the positions a checkpoint holds, and a sink that
// commits each checkpoint's records to a stream exactly once, with no time bound, through
// JetStream's atomic batch publish and a compare-and-swap chain of markers the server
// enforces. It owns the connection settings both share (servers, credentials, TLS), the
// positions and sink states they keep in checkpoints, their redistribution on rescale, and
// the conversion of the configuration's nats.*, source.jetstream.* and sink.jetstream.* keys
// into connectors. KVLease keeps a lease record (sdk.LeaseStore) on a key of a replicated
// KV bucket, for ownership that lives in NATS rather than beside the checkpoints.
// Repartition is a keyed exchange between the tasks of a job that runs on many runners:
// the upstream tasks write records by key group to the partitions of the job's repartition
// stream, packed many to a message, through the exactly-once sink as independent writers,
// and end their input with fenced end frames; each downstream task reads its partition
// through the source, until every writer has ended.
//
// Recovery never rests on acknowledgements nor on the stream's duplicate window: the source
// reads with ordered consumers (no acks) from the sequences its checkpoint holds; the sink
// recognises a commit already done by the last marker on a subject it owns, which the server
// guards with an expected last subject sequence.
//
// Dependency rule: the package imports the engine's interfaces (runtime/dataflow), the
// restart classification (runtime/restart), the configuration's types (runtime/config),
// the key groups (runtime/state) and the NATS client libraries (nats.go, orbit.go's
// jetstreamext, and nats-io/jwt to name a credentials file's user). It must never import
// the runner, the monitor, the plugin host, a command or a plugin, and never the NATS
// server (github.com/nats-io/nats-server), which only its tests start in-process.
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultConnectTimeout bounds the connection to a server when Conn.ConnectTimeout is 0.
const DefaultConnectTimeout = 5 * time.Second

// Conn says how to reach NATS and authenticate: the servers, at most one of user and
// password, token, nkey seed file or credentials file, and TLS. It never prints a secret:
// errors name the server and the user, not the password or the token.
type Conn struct {
	// Servers are nats:// (or tls://) URLs; one reachable is enough.
	Servers []string
	// User and Password authenticate by user name and password.
	User, Password string
	// Token authenticates by token.
	Token string
	// NKeyFile is a file holding an nkey seed (SU...), which signs the server's nonce.
	NKeyFile string
	// CredsFile is a credentials file (a user JWT and its nkey seed), as nsc writes them.
	CredsFile string
	// CAFile is a PEM file of the certificates the server's certificate must chain to;
	// setting it (or CertFile) makes the connection TLS.
	CAFile string
	// CertFile and KeyFile are a client certificate and its key, for servers that verify
	// clients.
	CertFile, KeyFile string
	// ConnectTimeout bounds each connection attempt and each JetStream request, and is the
	// interval of the connection's pings (DefaultConnectTimeout when 0).
	ConnectTimeout time.Duration
	// Name is the client name the server shows (for example "flowstate wordcount source 0").
	Name string
}

// Check reports what is wrong with the settings, without connecting.
func (c Conn) Check() error {
	if len(c.Servers) == 0 {
		return errors.New("no NATS server given (nats.servers)")
	}
	for i, s := range c.Servers {
		if err := checkServer(s); err != nil {
			return fmt.Errorf("nats.servers: server %d of %d: %w", i+1, len(c.Servers), err)
		}
	}
	n := 0
	for _, set := range []bool{c.User != "" || c.Password != "", c.Token != "", c.NKeyFile != "", c.CredsFile != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("give one way to authenticate: user and password, a token, an nkey file or a credentials file")
	case c.Password != "" && c.User == "":
		return errors.New("nats.password is set without nats.user")
	case (c.CertFile == "") != (c.KeyFile == ""):
		return errors.New("nats.tls.cert-file and nats.tls.key-file go together")
	}
	return nil
}

// checkServer reports what makes s no server address a connection can ever reach: no URL,
// no host, or a port that is not 1 to 65535. Such a mistake fails the job at once, where
// a connection attempt would fail as a server down does, and be retried for ever.
func checkServer(s string) error {
	u, err := url.Parse(serverURL(s))
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a URL", redactURL(s))
	case u.Hostname() == "":
		return fmt.Errorf("%s names no host", redactURL(s))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s: port %q is not 1 to 65535", redactURL(s), p)
		}
	}
	return nil
}

// serverURL gives a bare host:port the nats:// scheme.
func serverURL(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		return "nats://" + s
	}
	return s
}

// redactURL returns s with any secret in it replaced, as errors print servers: the password
// of user:password@, and a lone user name, which NATS takes as a token.
func redactURL(s string) string {
	u, err := url.Parse(serverURL(s))
	if err != nil {
		return "(a server URL that does not parse)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// servers returns the servers as errors print them, comma-separated and redacted.
func (c Conn) servers() string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = redactURL(s)
	}
	return strings.Join(out, ",")
}

// auth says how the connection authenticates, without a secret.
func (c Conn) auth() string {
	switch {
	case c.User != "":
		return fmt.Sprintf(" as user %q", c.User)
	case c.Token != "":
		return " with a token"
	case c.NKeyFile != "":
		return " with the nkey of " + c.NKeyFile
	case c.CredsFile != "":
		return " with the credentials of " + c.CredsFile + credsUser(c.CredsFile)
	}
	return ""
}

// credsUser names the user of a credentials file, from the name (or else the public key)
// in its user JWT, which is no secret; "" when the file does not read as one.
func credsUser(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return ""
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return ""
	}
	if claims.Name != "" {
		return fmt.Sprintf(" (user %q)", claims.Name)
	}
	return fmt.Sprintf(" (user %s)", claims.Subject)
}

// Describe says, without a secret, where the connection goes and how it authenticates.
func (c Conn) Describe() string {
	d := c.servers() + c.auth()
	if c.CAFile != "" || c.CertFile != "" {
		d += " over TLS"
	}
	return d
}

// maxPingsOutstanding is how many pings may go unanswered before the connection is stale.
const maxPingsOutstanding = 2

// pingInterval is how often a connection pings its server: every connect timeout, so that
// a server that stops answering is noticed about as soon as one that refuses a connection
// (nats.go's 2 minutes would leave a frozen server unnoticed for minutes).
func pingInterval(connectTimeout time.Duration) time.Duration { return connectTimeout }

// timeout is ConnectTimeout, or DefaultConnectTimeout when it is 0. It bounds each
// connection attempt and each JetStream request (a publish's ack, a commit's, a lookup).
func (c Conn) timeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

// options are the nats.go options of the connection.
func (c Conn) options() ([]nats.Option, error) {
	timeout := c.timeout()
	opts := []nats.Option{
		nats.Timeout(timeout),
		// A frozen or unreachable server is noticed within about three connect timeouts
		// (a ping every timeout, the connection stale when two are unanswered): 15 s by
		// default, sooner with a shorter nats.connect-timeout.
		nats.PingInterval(pingInterval(timeout)), nats.MaxPingsOutstanding(maxPingsOutstanding),
		nats.ReconnectWait(time.Second), nats.MaxReconnects(60),
		// Errors of the connection's background work surface in the calls that need it.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}),
	}
	if c.Name != "" {
		opts = append(opts, nats.Name(c.Name))
	}
	switch {
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	case c.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats.nkey-file %s: %w", c.NKeyFile, errors.New(scrub(err.Error())))
		}
		opts = append(opts, o)
	case c.CredsFile != "":
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	if c.CAFile != "" {
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	if c.CertFile != "" {
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	return opts, nil
}

// scrub drops anything that looks like an nkey seed from a library's message.
func scrub(msg string) string {
	var out []string
	for _, w := range strings.Fields(msg) {
		if strings.HasPrefix(strings.Trim(w, `"':`), "SU") && len(w) > 40 {
			w = "(seed)"
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// connect opens a connection for what (a sentence fragment naming the connector) and its
// JetStream context. A failure names the servers and the user, never a secret.
func (c Conn) connect(ctx context.Context, what string) (*nats.Conn, jetstream.JetStream, error) {
	if err := c.Check(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	opts, err := c.options()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = serverURL(s)
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(strings.Join(urls, ","), opts...)
		done <- result{nc, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, nil, fmt.Errorf("%s: connect to %s%s: %w", what, c.servers(), c.auth(), ctx.Err())
	}
	if r.err != nil {
		return nil, nil, fmt.Errorf("%s: connect to %s%s: %w", what, c.servers(), c.auth(), r.err)
	}
	// A request to a server that stopped answering fails within the timeout, as a
	// connection attempt does (not jetstream's 5 s whatever nats.connect-timeout says).
	js, err := jetstream.New(r.nc, jetstream.WithDefaultTimeout(c.timeout()))
	if err != nil {
		r.nc.Close()
		return nil, nil, fmt.Errorf("%s: JetStream on %s: %w", what, r.nc.ConnectedUrlRedacted(), err)
	}
	return r.nc, js, nil
}

// subtask connects a connector's subtask: what names the connector in errors, client the
// connection to the server when Name is not set.
func (c Conn) subtask(ctx context.Context, what string, subtask int, client string) (string, *nats.Conn, jetstream.JetStream, error) {
	if c.Name == "" {
		c.Name = fmt.Sprintf("flowstate jetstream %s %d", client, subtask)
	}
	what = fmt.Sprintf("%s subtask %d", what, subtask)
	nc, js, err := c.connect(ctx, what)
	return what, nc, js, err
}

// preflight looks stream up when a server answers and hands it to check (nil: none). A
// server that cannot be reached is no error here: the subtasks report it, so that the
// restart strategy governs the retries.
func (c Conn) preflight(ctx context.Context, what, name string, check func(*nats.Conn, *jetstream.StreamInfo) error) error {
	nc, js, err := c.connect(ctx, what)
	if err != nil {
		return nil
	}
	defer nc.Close()
	_, info, err := stream(ctx, nc, js, name, what)
	if err != nil || check == nil {
		return err
	}
	return check(nc, info)
}

// stream looks stream up on the connection; a missing stream is an error naming it and the
// server.
func stream(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, name, what string) (jetstream.Stream, *jetstream.StreamInfo, error) {
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil, fmt.Errorf("%s: stream %q not found on %s: %w", what, name, nc.ConnectedUrlRedacted(), err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: stream %q on %s: %w", what, name, nc.ConnectedUrlRedacted(), err)
	}
	info := st.CachedInfo()
	if info == nil {
		if info, err = st.Info(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: stream %q on %s: %w", what, name, nc.ConnectedUrlRedacted(), err)
		}
	}
	return st, info, nil
}

package jetstream

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/flowstate/flowstate/internal/testcert"
	"github.com/flowstate/flowstate/internal/testwait"
)

// connects reports whether a source of conn opens on the server (its stream is missing, so
// a connection that succeeds fails naming the stream).
func openWith(conn Conn) error {
	_, err := (&Source{Conn: conn, Stream: "IN"}).Open(context.Background(), 0, 1, nil)
	return err
}

// authenticated says whether err is the failure of a connection that got through: the
// stream it asks for is missing.
func authenticated(err error) bool {
	return err != nil && strings.Contains(err.Error(), `stream "IN" not found`)
}

func TestAuthFailureNamesServerAndUserNotTheSecret(t *testing.T) {
	ts := startServer(t, func(o *server.Options) { o.Username, o.Password = "alice", "right-password-123" })
	conn := ts.conn()
	conn.User, conn.Password = "alice", "wrong-password-456"
	err := openWith(conn)
	if err == nil || authenticated(err) {
		t.Fatalf("a wrong password: %v, want an authentication failure", err)
	}
	for _, want := range []string{ts.ClientURL(), `user "alice"`, "uthorization"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong-password-456") {
		t.Errorf("error %q shows the password", err)
	}
	conn.Password = "right-password-123"
	if err := openWith(conn); !authenticated(err) {
		t.Fatalf("the right password: %v", err)
	}
}

func TestTokenAuthNeverShowsTheToken(t *testing.T) {
	ts := startServer(t, func(o *server.Options) { o.Authorization = "the-right-token-9" })
	conn := ts.conn()
	conn.Token = "a-wrong-token-7"
	err := openWith(conn)
	if err == nil || authenticated(err) || strings.Contains(err.Error(), "a-wrong-token-7") || !strings.Contains(err.Error(), "with a token") {
		t.Fatalf("a wrong token: %v, want a failure that says a token was used, not which", err)
	}
	// A token in the server URL is redacted too.
	u := strings.Replace(ts.ClientURL(), "nats://", "nats://a-wrong-token-7@", 1)
	if err := openWith(Conn{Servers: []string{u}}); err == nil || strings.Contains(err.Error(), "a-wrong-token-7") {
		t.Fatalf("a token in the URL: %v, want a failure that does not show it", err)
	}
	conn.Token = "the-right-token-9"
	if err := openWith(conn); !authenticated(err) {
		t.Fatalf("the right token: %v", err)
	}
}

func TestNKeyAuth(t *testing.T) {
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	ts := startServer(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} })
	file := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(file, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	conn := ts.conn()
	conn.NKeyFile = file
	if err := openWith(conn); !authenticated(err) {
		t.Fatalf("the user's nkey: %v", err)
	}
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	if err := os.WriteFile(file, otherSeed, 0o600); err != nil {
		t.Fatal(err)
	}
	err = openWith(conn)
	if err == nil || authenticated(err) || strings.Contains(err.Error(), string(otherSeed)) || !strings.Contains(err.Error(), file) {
		t.Fatalf("another nkey: %v, want a failure naming the file, not the seed", err)
	}
}

func TestTLSWithACA(t *testing.T) {
	cert, key := testcert.Write(t)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cert, KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(o *server.Options) { o.TLS, o.TLSConfig = true, tc })
	conn := ts.conn()
	if err := openWith(conn); err == nil || authenticated(err) {
		t.Fatalf("TLS without the CA: %v, want a failure", err)
	}
	conn.CAFile = cert
	if err := openWith(conn); !authenticated(err) {
		t.Fatalf("TLS with the CA: %v", err)
	}
}

func TestServerDownNamesTheURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	err = openWith(Conn{Servers: []string{"nats://" + addr}})
	if err == nil || !strings.Contains(err.Error(), "nats://"+addr) {
		t.Fatalf("no server: %v, want an error naming nats://%s", err, addr)
	}
}

func TestConnCheckAndDescribe(t *testing.T) {
	for _, c := range []struct {
		conn Conn
		want string
	}{
		{Conn{}, "no NATS server"},
		{Conn{Servers: []string{"x"}, User: "u", Token: "t"}, "one way to authenticate"},
		{Conn{Servers: []string{"x"}, Password: "p"}, "without nats.user"},
		{Conn{Servers: []string{"x"}, CertFile: "c"}, "go together"},
		// Addresses no retry can reach fail the check, as a server down would not.
		{Conn{Servers: []string{"nats://h:4222", "nats://:4222"}}, "nats.servers: server 2 of 2: nats://:4222 names no host"},
		{Conn{Servers: []string{"h:99999"}}, `nats://h:99999: port "99999" is not 1 to 65535`},
		{Conn{Servers: []string{"nats://bob:pw-secret@h:0"}}, `nats://bob:xxxxx@h:0: port "0"`},
		{Conn{Servers: []string{"nats://h:abc"}}, "server 1 of 1: (a server URL that does not parse)"},
	} {
		if err := c.conn.Check(); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("%+v: %v, want %q and no secret", c.conn, err, c.want)
		}
	}
	d := Conn{Servers: []string{"nats://bob:pw-secret@h:4222", "h2:4222"}, User: "bob", Password: "pw-secret", CAFile: "ca.pem"}.Describe()
	if strings.Contains(d, "pw-secret") || !strings.Contains(d, "nats://h2:4222") || !strings.Contains(d, `user "bob"`) || !strings.Contains(d, "TLS") {
		t.Fatalf("describe: %q", d)
	}
}

// freezer forwards TCP connections to a server until frozen: then it passes nothing on,
// as a server stopped with SIGSTOP answers nothing while its connections stay open.
type freezer struct {
	l      net.Listener
	frozen chan struct{}
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l, frozen: make(chan struct{})}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go f.pipe(c, s)
			go f.pipe(s, c)
		}
	}()
	return f
}

// pipe copies from to to until frozen (then it holds what it read) or either side ends.
func (f *freezer) pipe(from, to net.Conn) {
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		select {
		case <-f.frozen:
			<-make(chan struct{}) // frozen for good: the test ends first
		default:
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestFrozenServerNoticedWithinTheConnectTimeout: with a server that stops answering, a
// JetStream request fails within nats.connect-timeout (not jetstream's own 5 s), and the
// connection's pings, one per connect timeout, find it stale within about three. Before,
// pings every 5 s and 5 s requests let a frozen server go unnoticed for 12 s and more
// whatever the connect timeout (found by the e2e test TestJetStreamFrozenServer).
func TestFrozenServerNoticedWithinTheConnectTimeout(t *testing.T) {
	srv := startServer(t)
	f := newFreezer(t, strings.TrimPrefix(srv.ClientURL(), "nats://"))
	const timeout = 300 * time.Millisecond
	conn := Conn{Servers: []string{"nats://" + f.l.Addr().String()}, ConnectTimeout: timeout}
	nc, js, err := conn.connect(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := js.AccountInfo(context.Background()); err != nil {
		t.Fatalf("before the freeze: %v", err)
	}
	close(f.frozen)
	start := time.Now()
	if _, err := js.AccountInfo(context.Background()); err == nil {
		t.Fatal("a request to the frozen server succeeded")
	}
	if took := time.Since(start); took > 3*timeout {
		t.Fatalf("the request to the frozen server failed after %s, want within about the connect timeout %s", took, timeout)
	}
	testwait.For(t, "the connection to the frozen server to go stale", 10*timeout, func() error {
		if nc.IsConnected() {
			return errors.New("still connected")
		}
		return nil
	})
	t.Logf("stale after %s", time.Since(start).Round(time.Millisecond))
}

// operatorServer starts a server in operator mode (decentralized JWT authentication, as
// nsc sets up): it trusts one operator whose account, with JetStream enabled, is preloaded
// into a memory resolver. It returns the server and the account's signing key pair.
func operatorServer(t *testing.T) (*testServer, nkeys.KeyPair) {
	t.Helper()
	operator, _ := nkeys.CreateOperator()
	opPub, _ := operator.PublicKey()
	opClaims := jwt.NewOperatorClaims(opPub)
	opClaims.Name = "flowstate-test"
	opJWT, err := opClaims.Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	opToken, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	account, _ := nkeys.CreateAccount()
	accPub, _ := account.PublicKey()
	accClaims := jwt.NewAccountClaims(accPub)
	accClaims.Name = "jobs"
	accClaims.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	accJWT, err := accClaims.Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	// JetStream in operator mode needs a system account.
	system, _ := nkeys.CreateAccount()
	sysPub, _ := system.PublicKey()
	sysClaims := jwt.NewAccountClaims(sysPub)
	sysClaims.Name = "SYS"
	sysJWT, err := sysClaims.Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	for pub, claims := range map[string]string{accPub: accJWT, sysPub: sysJWT} {
		if err := resolver.Store(pub, claims); err != nil {
			t.Fatal(err)
		}
	}
	return startServer(t, func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{opToken}
		o.AccountResolver = resolver
		o.SystemAccount = sysPub
	}), account
}

// writeCreds writes a credentials file, as nsc does, for a new user named name signed by
// account, and returns its path and the user's seed.
func writeCreds(t *testing.T, account nkeys.KeyPair, name string) (string, []byte) {
	t.Helper()
	user, _ := nkeys.CreateUser()
	userPub, _ := user.PublicKey()
	seed, _ := user.Seed()
	accPub, _ := account.PublicKey()
	claims := jwt.NewUserClaims(userPub)
	claims.Name = name
	claims.IssuerAccount = accPub
	userJWT, err := claims.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(userJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name+".creds")
	if err := os.WriteFile(file, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, seed
}

func TestCredsFileAuth(t *testing.T) {
	ts, account := operatorServer(t)
	conn := ts.conn()
	conn.CredsFile, _ = writeCreds(t, account, "runner")
	if err := openWith(conn); !authenticated(err) {
		t.Fatalf("the user's credentials file: %v", err)
	}

	// A user signed by an account the operator never issued is refused: the error names
	// the server and the file, never the seed or the JWT.
	stranger, _ := nkeys.CreateAccount()
	file, seed := writeCreds(t, stranger, "stranger")
	conn.CredsFile = file
	err := openWith(conn)
	if err == nil || authenticated(err) {
		t.Fatalf("a stranger's credentials: %v, want an authentication failure", err)
	}
	for _, want := range []string{ts.ClientURL(), "with the credentials of " + file, `user "stranger"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	body, _ := os.ReadFile(file)
	for _, secret := range []string{string(seed), string(body[strings.Index(string(body), "eyJ"):][:40])} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows a secret of the credentials file", err)
		}
	}

	// A credentials file that is not there is named.
	conn.CredsFile = filepath.Join(t.TempDir(), "missing.creds")
	if err := openWith(conn); err == nil || authenticated(err) || !strings.Contains(err.Error(), conn.CredsFile) {
		t.Fatalf("a missing credentials file: %v, want an error naming it", err)
	}
}

package control

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testcert"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/sdk"
)

// TestSlowBodyIsCutOff: a request whose body comes one byte at a time, with the token (so
// that its handler reads the body), has its connection closed once ReadTimeout has passed,
// long before the body would be complete.
func TestSlowBodyIsCutOff(t *testing.T) {
	const timeout = 500 * time.Millisecond
	s, _, cancelled := listenWith(t, Options{OpenReads: true, Limits: Limits{ReadTimeout: timeout}})
	const bodyLen = 200 // at one byte per 100 ms: 20 s
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n{",
		CancelPath, s.Addr(), tokenOf(t, s), bodyLen)
	cutOff(t, s, timeout, head, strings.Repeat(" ", bodyLen-1), "a slow body")
	notCancelled(t, cancelled, "a slow body")
}

// cutOff sends head at once, then slow one byte every 100 ms, and checks that the endpoint
// closes the connection without serving it within about its ReadTimeout, timeout.
func cutOff(t *testing.T, s *Server, timeout time.Duration, head, slow, what string) {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, head)
	start := time.Now()
	go func() { // one byte every 100 ms until the connection is closed
		for i := range len(slow) {
			time.Sleep(100 * time.Millisecond) // the slow client's pace: simulated, not a wait
			if _, err := io.WriteString(conn, slow[i:i+1]); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	answer, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection of %s is still open after 15 s (ReadTimeout %s)", what, timeout)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the connection of %s was closed after %s; ReadTimeout is %s", what, took, timeout)
	}
	if strings.Contains(string(answer), " 200 ") || strings.Contains(string(answer), " 204 ") {
		t.Fatalf("%s was served: %q", what, answer)
	}
}

// TestLongSavepointOutlivesTheTimeouts: a savepoint that takes longer than the read and
// write timeouts is still answered: its handler lifts the deadlines once the body is read.
func TestLongSavepointOutlivesTheTimeouts(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s, c, _ := listenWith(t, Options{OpenReads: true, Limits: Limits{ReadTimeout: timeout, WriteTimeout: timeout}})
	go func() {
		req := <-s.Savepoints()
		time.Sleep(5 * timeout) // the savepoint takes long: simulated, not a wait
		req.Reply <- dataflow.SavepointResult{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "/sp/long"}}
	}()
	if ptr, err := c.TriggerSavepoint(context.Background(), SavepointRequest{Job: "wc"}); err != nil || ptr != "/sp/long" {
		t.Fatalf("a savepoint longer than the timeouts = %q, %v; want /sp/long", ptr, err)
	}
}

// openFiles counts this process's file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// TestHeldConnectionsAreBounded: clients that open many connections and send nothing make
// the endpoint hold at most MaxConnections of them (the others wait unaccepted, with no
// descriptor of the process), and a request behind them is still served once the header
// timeout frees their places.
func TestHeldConnectionsAreBounded(t *testing.T) {
	const limit, held = 4, 24
	s, _, _ := listenWith(t, Options{OpenReads: true, Limits: Limits{ReadTimeout: 300 * time.Millisecond, MaxConnections: limit}})
	c := NewClient(s.Addr(), tokenOf(t, s), "the test", nil) // no connection kept alive
	base := openFiles(t)
	var peak atomic.Int64
	sample := func() {
		if n := int64(openFiles(t)); n > peak.Load() {
			peak.Store(n)
		}
	}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			sample()
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	for range held {
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := c.Job(ctx)
	close(stop)
	<-sampled
	sample() // once more, with every held connection open
	if err != nil {
		t.Fatalf("a request behind %d held connections: %v", held, err)
	}
	// The held connections' client ends, the request's, and at most limit accepted ones
	// (plus the sampler's own directory descriptor and one more of the runtime).
	if max := int64(base + held + 1 + limit + 2); peak.Load() > max {
		t.Fatalf("%d descriptors at the peak with %d held connections; want at most %d (%d before, limit %d)", peak.Load(), held, max, base, limit)
	}
}

// TestTLS: an endpoint with a certificate serves HTTPS only; a client that trusts the
// certificate reaches it, one that does not, or talks plain HTTP, does not.
func TestTLS(t *testing.T) {
	cert, key := testcert.Write(t)
	s, _, _ := listenWith(t, Options{OpenReads: true, CertFile: cert, KeyFile: key})
	trust, err := LoadTrust(cert, "rest.ssl.certificate")
	if err != nil {
		t.Fatal(err)
	}
	tok := tokenOf(t, s)
	c := NewClient(s.Addr(), tok, "the test", trust)
	if info, err := c.Job(context.Background()); err != nil || info.Job != "wc" {
		t.Fatalf("Job over TLS = %+v, %v", info, err)
	}
	if _, err := NewClient(s.Addr(), tok, "the test", nil).Job(context.Background()); err == nil {
		t.Fatal("plain HTTP to a TLS endpoint answered")
	}
	if _, err := http.Get("https://" + s.Addr() + JobPath); err == nil {
		t.Fatal("a client that does not trust the certificate reached the endpoint")
	}
	if _, err := LoadTrust(key, "rest.ssl.trust-certificate"); err == nil {
		t.Fatal("a key file loaded as a certificate to trust")
	}
}

// TestTokenFilesArePrivate: the token file a runner writes is 0600 in a 0700 directory; a
// token file others can read is refused, naming the file.
func TestTokenFilesArePrivate(t *testing.T) {
	s, _, _ := listen(t)
	fi, err := os.Stat(s.TokenFile())
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(filepath.Dir(s.TokenFile()))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("token file %s: mode %v in a directory of mode %v; want 0600 in 0700", s.TokenFile(), fi.Mode().Perm(), di.Mode().Perm())
	}
	if len(tokenOf(t, s)) != 64 {
		t.Fatalf("token %d characters long; want 64 (32 random bytes in hex)", len(tokenOf(t, s)))
	}
	open := t.TempDir() + "/token"
	if err := os.WriteFile(open, []byte(NewToken()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Options{Address: "127.0.0.1:0", Job: "wc", TokenFile: open}); err == nil || !strings.Contains(err.Error(), open) ||
		!strings.Contains(err.Error(), "rest.token-file") {
		t.Fatalf("Listen with a token file others can read = %v; want a refusal naming the key and the file", err)
	}
	short := t.TempDir() + "/short"
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(short, "rest.token-file"); err == nil {
		t.Fatal("a 3-character token was accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.TokenFile()); !os.IsNotExist(err) {
		t.Fatalf("the token file is still there after Close: %v", err)
	}
}

// TestSlowHeadersAreCutOff: a client that sends its request's headers one byte at a time
// (a slowloris), without a token, has its connection closed once ReadTimeout (the header
// timeout too) has passed, long before its headers would end.
func TestSlowHeadersAreCutOff(t *testing.T) {
	const timeout = 500 * time.Millisecond
	s, _, cancelled := listenWith(t, Options{OpenReads: true, Limits: Limits{ReadTimeout: timeout}})
	cutOff(t, s, timeout, "G", fmt.Sprintf("ET %s HTTP/1.1\r\nHost: %s\r\nX-Slow: %s\r\n\r\n", JobPath, s.Addr(), strings.Repeat("a", 200)), "slow headers")
	notCancelled(t, cancelled, "slow headers")
}

// TestHugeRequestsAreRefusedCheaply: a 1 MiB header is refused with 431, and a POST that
// announces a 4 GB body, with the token, is answered 400 after at most the body cap has
// been read: the endpoint closes the connection rather than take the rest.
func TestHugeRequestsAreRefusedCheaply(t *testing.T) {
	s, _, cancelled := listen(t)
	big, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	go func() { // the endpoint may close the connection before it has all of it
		fmt.Fprintf(big, "GET %s HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", JobPath, s.Addr(), strings.Repeat("a", 1<<20))
	}()
	big.SetReadDeadline(time.Now().Add(15 * time.Second))
	if status, err := bufio.NewReader(big).ReadString('\n'); err != nil || !strings.Contains(status, "431") {
		t.Fatalf("a 1 MiB header: %q, %v; want 431", status, err)
	}
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: 4000000000\r\n\r\n{\"job\":\"",
		CancelPath, s.Addr(), tokenOf(t, s))
	sent := make(chan int64, 1)
	go func() { // as much of the body as the endpoint takes
		chunk := []byte(strings.Repeat("a", 64<<10))
		var n int64
		for n < 4e9 {
			if _, err := conn.Write(chunk); err != nil {
				break
			}
			n += int64(len(chunk))
		}
		sent <- n
	}()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "400") {
		t.Fatalf("a 4 GB body: %q, %v; want 400", status, err)
	}
	conn.(*net.TCPConn).CloseRead()
	select {
	case n := <-sent:
		// What the socket buffers hold besides the cap: a few MiB at most.
		if n > 64<<20 {
			t.Fatalf("the endpoint took %d bytes of a 4 GB body; want about its cap, %d", n, maxBodyBytes)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the endpoint still takes the 4 GB body 15 s after it answered")
	}
	notCancelled(t, cancelled, "a 4 GB body")
}

// Package natstest starts real NATS servers for tests, and only for tests: the nats-server
// binary that scripts/natsserver.sh builds from the Go module proxy (make test exports its
// path as FLOWSTATE_NATS_SERVER through scripts/with-nats.sh), each node its own process on
// 127.0.0.1, so that a test can kill it (SIGKILL), freeze it (SIGSTOP), thaw it and restart
// it on the same ports and store dir. It owns the servers' configuration (JetStream on,
// free client and route ports, unique server names, a temp store dir per node, and the
// options in Options: credentials, TLS with a CA of its own, payload and batch limits),
// waiting for them to be ready, killing every process it started when the test ends, and a
// few helpers over nats.go's jetstream package (streams.go) to create streams, publish a
// text and read a subject range back.
//
// No code outside tests may import it (internal/deps checks), and it must never import a
// package of this repository other than internal/testwait and internal/testcert: the
// connectors' own tests use it, so it cannot know them.
package natstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testcert"
	"github.com/flowstate/flowstate/internal/testwait"
)

// ServerEnv names the environment variable holding the path of the nats-server binary.
const ServerEnv = "FLOWSTATE_NATS_SERVER"

// startTimeout bounds a node's start (its process up, its client port answering) and the
// wait for a JetStream meta leader.
const startTimeout = 30 * time.Second

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns the path of the nats-server binary: $FLOWSTATE_NATS_SERVER, or else the
// one scripts/natsserver.sh build makes (once per test process; the script caches it
// across runs). It fails t, saying why, when neither gives a binary: a test that needs the
// real server never skips silently.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(ServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v (scripts/with-nats.sh sets it to the binary scripts/natsserver.sh builds)", ServerEnv, p, err)
		}
		return p
	}
	buildOnce.Do(func() { buildPath, buildErr = buildServer() })
	if buildErr != nil {
		t.Fatalf("no nats-server: %s is not set and building it failed: %v", ServerEnv, buildErr)
	}
	return buildPath
}

// buildServer runs scripts/natsserver.sh build and then bin, and returns the binary's path.
func buildServer() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "natsserver.sh")
	var out bytes.Buffer
	build := exec.Command(script, "build")
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("%s build: %w\n%s", script, err, out.Bytes())
	}
	bin, err := exec.Command(script, "bin").Output()
	if err != nil {
		return "", fmt.Errorf("%s bin: %w", script, err)
	}
	path := strings.TrimSpace(string(bin))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s build left no binary: %w", script, err)
	}
	return path, nil
}

// Options configure every node of a server or cluster. The zero value is a plain
// JetStream server with the server's defaults, no authentication and no TLS.
type Options struct {
	// User and Password, when User is set, make the server require them of every client
	// (authorization { user, password }). Connect and ConnectOptions pass them.
	User, Password string
	// Token, when set, makes the server require this token of every client.
	Token string
	// TLS serves clients over TLS with a server certificate for 127.0.0.1 and localhost,
	// signed by a CA generated for the test (Cluster.CAFile). Client URLs are then tls://.
	TLS bool
	// MaxPayload is the largest message payload the server accepts, in bytes (0: the
	// server's default, 1 MiB).
	MaxPayload int
	// SyncAlways makes JetStream fsync after every write (jetstream { sync_interval:
	// always }) instead of every 2 minutes.
	SyncAlways bool
	// BatchMaxMsgs, BatchMaxInflight and BatchTimeout are JetStream's limits on atomic
	// batch publishes (jetstream.limits.batch: max_msgs, max_inflight_per_stream,
	// timeout); 0 leaves the server's default (1000, 50, 10 s).
	BatchMaxMsgs, BatchMaxInflight int
	BatchTimeout                   time.Duration
	// Config is appended, as written, to every node's configuration file.
	Config string
}

// Cluster is one server (StartServer) or a cluster of nodes (StartCluster) that a test
// started; every process is killed when the test ends.
type Cluster struct {
	t                 testing.TB
	opts              Options
	bin               string
	dir               string // the test's directory for the nodes' dirs and the certificates
	name              string // the cluster's name ("" for a single server)
	caFile            string // the CA of the server certificate, with TLS
	certFile, keyFile string // the server certificate and its key, with TLS
	nodes             []*Node
}

// Node is one nats-server process of a Cluster.
type Node struct {
	c          *Cluster
	name       string
	clientPort int
	routePort  int // 0 for a single server
	dir        string
	storeDir   string
	configFile string
	logFile    string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the current process has exited and been reaped
	logFrom int64         // the log's size when the current process started
}

// StartServer starts a single JetStream node and waits until it accepts clients and its
// JetStream answers.
func StartServer(t testing.TB, opts Options) *Cluster {
	t.Helper()
	return start(t, 1, opts)
}

// StartCluster starts a cluster of n JetStream nodes (3 for R3 streams) on 127.0.0.1 and
// waits until every node accepts clients and JetStream has a meta leader that every node
// reaches.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 2 {
		t.Fatalf("natstest.StartCluster: %d nodes; a cluster has at least 2 (StartServer starts one)", n)
	}
	return start(t, n, opts)
}

// start picks free ports, writes each node's configuration and starts them all; a node
// that could not bind its ports (another process took one between the pick and the bind)
// makes it start over with new ports, at most three times.
func start(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, opts: opts, bin: Binary(t), dir: t.TempDir()}
	// Registered after the directory: cleanups run last first, so the processes are gone
	// (and their logs shown) before it is removed.
	t.Cleanup(c.cleanup)
	if opts.TLS {
		c.caFile, c.certFile, c.keyFile = testcert.WriteCA(t, c.dir)
	}
	if n > 1 {
		c.name = fmt.Sprintf("flowstate-test-%d-%d", os.Getpid(), clusterSeq.Add(1))
	}
	for attempt := 1; ; attempt++ {
		err := c.startAll(n)
		if err == nil {
			break
		}
		var busy *portInUseError
		if !errors.As(err, &busy) || attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("natstest: %v; starting again on other ports", err)
		for _, nd := range c.nodes {
			nd.kill()
		}
		c.nodes = nil
	}
	for _, nd := range c.nodes {
		nd.waitReady()
	}
	c.WaitMetaLeader()
	if n > 1 {
		c.waitPlacement(n)
	}
	return c
}

// waitPlacement waits until the meta leader places a stream on all n nodes. A meta leader
// is elected before it has heard from every peer, and until it has, creating a replicated
// stream fails with "no suitable peers for placement" (a test failed so in CI, 1 s after
// the election): so a probe stream of n replicas is created, retried until it is, and
// deleted.
func (c *Cluster) waitPlacement(n int) {
	c.t.Helper()
	js := c.JetStream(c.t)
	const probe = "NATSTEST_PLACEMENT_PROBE"
	testwait.For(c.t, fmt.Sprintf("the meta leader to place a stream on all %d nodes", n), startTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: probe, Subjects: []string{"natstest.placement.probe"},
			Storage: jetstream.MemoryStorage, Replicas: n,
		})
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := js.DeleteStream(ctx, probe); err != nil {
		c.t.Fatalf("natstest: delete the placement probe stream: %v", err)
	}
}

// clusterSeq numbers the clusters of this test process, for unique cluster names.
var clusterSeq atomic.Int64

// startAll configures and starts n nodes on fresh ports.
func (c *Cluster) startAll(n int) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		dir, err := os.MkdirTemp(c.dir, "node")
		if err != nil {
			return fmt.Errorf("natstest: %w", err)
		}
		nd := &Node{
			c:          c,
			name:       fmt.Sprintf("n%d-%d", i, ports[i]),
			clientPort: ports[i],
			dir:        dir,
			storeDir:   filepath.Join(dir, "store"),
			configFile: filepath.Join(dir, "nats-server.conf"),
			logFile:    filepath.Join(dir, "nats-server.log"),
		}
		if n > 1 {
			nd.routePort = ports[n+i]
		}
		c.nodes = append(c.nodes, nd)
	}
	for _, nd := range c.nodes {
		if err := os.WriteFile(nd.configFile, []byte(c.config(nd)), 0o600); err != nil {
			return fmt.Errorf("natstest: write %s: %w", nd.configFile, err)
		}
	}
	for _, nd := range c.nodes {
		if err := nd.spawn(); err != nil {
			return err
		}
	}
	// A node that cannot bind its ports exits at once; give each the chance to say so
	// before waiting on any of them.
	for _, nd := range c.nodes {
		if err := nd.waitListening(); err != nil {
			return err
		}
	}
	return nil
}

// config is node nd's configuration file.
func (c *Cluster) config(nd *Node) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("server_name: %q", nd.name)
	p("listen: \"127.0.0.1:%d\"", nd.clientPort)
	if c.opts.MaxPayload > 0 {
		p("max_payload: %d", c.opts.MaxPayload)
	}
	p("jetstream {")
	p("  store_dir: %q", nd.storeDir)
	if c.opts.SyncAlways {
		p("  sync_interval: always")
	}
	if c.opts.BatchMaxMsgs > 0 || c.opts.BatchMaxInflight > 0 || c.opts.BatchTimeout > 0 {
		p("  limits { batch {")
		if c.opts.BatchMaxMsgs > 0 {
			p("    max_msgs: %d", c.opts.BatchMaxMsgs)
		}
		if c.opts.BatchMaxInflight > 0 {
			p("    max_inflight_per_stream: %d", c.opts.BatchMaxInflight)
		}
		if c.opts.BatchTimeout > 0 {
			p("    timeout: %q", c.opts.BatchTimeout.String())
		}
		p("  } }")
	}
	p("}")
	if nd.routePort != 0 {
		p("cluster {")
		p("  name: %q", c.name)
		p("  listen: \"127.0.0.1:%d\"", nd.routePort)
		p("  routes: [")
		for _, other := range c.nodes {
			if other != nd {
				p("    \"nats-route://127.0.0.1:%d\"", other.routePort)
			}
		}
		p("  ]")
		p("}")
	}
	switch {
	case c.opts.User != "":
		p("authorization { user: %q, password: %q }", c.opts.User, c.opts.Password)
	case c.opts.Token != "":
		p("authorization { token: %q }", c.opts.Token)
	}
	if c.opts.TLS {
		p("tls { cert_file: %q, key_file: %q, timeout: 5 }", c.certFile, c.keyFile)
	}
	if c.opts.Config != "" {
		p("%s", c.opts.Config)
	}
	return b.String()
}

// URL is every node's client URL, comma-separated, as nats.Connect takes them.
func (c *Cluster) URL() string { return strings.Join(c.URLs(), ",") }

// URLs are the nodes' client URLs, in node order.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = nd.URL()
	}
	return out
}

// Nodes are the cluster's nodes (one for StartServer).
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// NodeNamed returns the node whose server name is name, or nil.
func (c *Cluster) NodeNamed(name string) *Node {
	for _, nd := range c.nodes {
		if nd.name == name {
			return nd
		}
	}
	return nil
}

// CAFile is the PEM file of the CA that signed the servers' certificates ("" without TLS).
func (c *Cluster) CAFile() string { return c.caFile }

// ConnectOptions are the nats.Options a client of this cluster needs: its credentials and
// the CA of its certificates, as configured.
func (c *Cluster) ConnectOptions() []nats.Option {
	var opts []nats.Option
	switch {
	case c.opts.User != "":
		opts = append(opts, nats.UserInfo(c.opts.User, c.opts.Password))
	case c.opts.Token != "":
		opts = append(opts, nats.Token(c.opts.Token))
	}
	if c.caFile != "" {
		opts = append(opts, nats.RootCAs(c.caFile))
	}
	return opts
}

// Connect connects to the cluster (every node's URL) with ConnectOptions and extra; the
// connection is closed when the test ends.
func (c *Cluster) Connect(t testing.TB, extra ...nats.Option) *nats.Conn {
	t.Helper()
	return c.connect(t, c.URL(), extra...)
}

func (c *Cluster) connect(t testing.TB, url string, extra ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, append(c.ConnectOptions(), extra...)...)
	if err != nil {
		t.Fatalf("natstest: connect to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream connects to the cluster and returns its JetStream context.
func (c *Cluster) JetStream(t testing.TB, extra ...nats.Option) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(c.Connect(t, extra...))
	if err != nil {
		t.Fatalf("natstest: jetstream: %v", err)
	}
	return js
}

// WaitMetaLeader waits until JetStream answers an account info request on every running
// node: in a cluster, only the meta leader answers it, so every node then reaches one.
func (c *Cluster) WaitMetaLeader() {
	c.t.Helper()
	for _, nd := range c.nodes {
		if nd.Running() {
			nd.waitJetStream()
		}
	}
}

// cleanup kills every node still running, and shows the nodes' logs of a failed test.
func (c *Cluster) cleanup() {
	for _, nd := range c.nodes {
		nd.kill()
	}
	if c.t.Failed() {
		for _, nd := range c.nodes {
			c.t.Logf("natstest: last lines of %s's log (%s):\n%s", nd.name, nd.logFile, tailFile(nd.logFile, 30))
		}
	}
}

// Name is the node's server name (unique in the cluster).
func (n *Node) Name() string { return n.name }

// URL is the node's client URL.
func (n *Node) URL() string {
	scheme := "nats"
	if n.c.opts.TLS {
		scheme = "tls"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, n.clientPort)
}

// StoreDir is the node's JetStream store directory, kept across restarts.
func (n *Node) StoreDir() string { return n.storeDir }

// LogFile is the file the node's output goes to, across restarts.
func (n *Node) LogFile() string { return n.logFile }

// PID is the process id of the node's current process (0 before the first start).
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Running reports whether the node's current process has not exited.
func (n *Node) Running() bool {
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// Connect connects to this node alone with the cluster's ConnectOptions and extra; the
// connection is closed when the test ends.
func (n *Node) Connect(t testing.TB, extra ...nats.Option) *nats.Conn {
	t.Helper()
	return n.c.connect(t, n.URL(), extra...)
}

// Kill sends the node's process SIGKILL and waits until it has exited.
func (n *Node) Kill() {
	n.c.t.Helper()
	if !n.Running() {
		n.c.t.Fatalf("natstest: kill %s: it is not running", n.name)
	}
	n.kill()
}

// kill sends SIGKILL (which ends a stopped process too) and waits for the exit.
func (n *Node) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		n.c.t.Errorf("natstest: %s (pid %d) did not exit within 10 s of SIGKILL", n.name, cmd.Process.Pid)
	}
}

// Stop freezes the node's process with SIGSTOP and waits until the kernel shows it
// stopped: its connections stay open, and it answers nothing.
func (n *Node) Stop() {
	n.c.t.Helper()
	n.signal(syscall.SIGSTOP, true)
}

// Cont thaws a node that Stop froze (SIGCONT) and waits until it runs again.
func (n *Node) Cont() {
	n.c.t.Helper()
	n.signal(syscall.SIGCONT, false)
}

func (n *Node) signal(sig syscall.Signal, stopped bool) {
	n.c.t.Helper()
	pid := n.PID()
	if !n.Running() {
		n.c.t.Fatalf("natstest: %v to %s: it is not running", sig, n.name)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		n.c.t.Fatalf("natstest: %v to %s (pid %d): %v", sig, n.name, pid, err)
	}
	testwait.For(n.c.t, fmt.Sprintf("%s (pid %d) to be %s", n.name, pid, map[bool]string{true: "stopped", false: "running again"}[stopped]), 10*time.Second, func() error {
		state, err := processState(pid)
		if err != nil {
			return testwait.Stop(err)
		}
		if (state == "T" || state == "t") != stopped {
			return fmt.Errorf("state %s", state)
		}
		return nil
	})
}

// Restart starts the node again on the same ports, configuration and store dir (killing
// it first if it still runs), and waits until it accepts clients and reaches a JetStream
// meta leader.
func (n *Node) Restart() {
	n.c.t.Helper()
	if n.Running() {
		n.kill()
	}
	if err := n.spawn(); err != nil {
		n.c.t.Fatal(err)
	}
	if err := n.waitListening(); err != nil {
		n.c.t.Fatal(err)
	}
	n.waitReady()
	n.waitJetStream()
}

// spawn starts the node's process, its output appended to its log file. The process gets
// SIGKILL should the test process die first (Pdeathsig), so none outlives the test.
func (n *Node) spawn() error {
	log, err := os.OpenFile(n.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("natstest: %s: log file: %w", n.name, err)
	}
	st, err := log.Stat()
	if err != nil {
		log.Close()
		return fmt.Errorf("natstest: %s: log file: %w", n.name, err)
	}
	cmd := exec.Command(n.c.bin, "-c", n.configFile)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("natstest: start %s (%s -c %s): %w", n.name, n.c.bin, n.configFile, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.exited, n.logFrom = cmd, exited, st.Size()
	n.mu.Unlock()
	return nil
}

// portInUseError is a node that could not bind a port picked for it.
type portInUseError struct{ node, log string }

func (e *portInUseError) Error() string {
	return fmt.Sprintf("natstest: %s could not bind its ports: %s", e.node, e.log)
}

// waitListening waits until the node's own log, since its last start, says it listens for
// clients (a TCP probe of the port could reach another process that took the port), or
// until its process exits (a port in use, a bad configuration: the error holds its log's
// last lines).
func (n *Node) waitListening() error {
	n.mu.Lock()
	exited, from := n.exited, n.logFrom
	n.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		select {
		case <-exited:
			tail := tailFile(n.logFile, 20)
			if strings.Contains(tail, "address already in use") {
				return &portInUseError{node: n.name, log: tail}
			}
			return fmt.Errorf("natstest: %s (%s -c %s) exited during start-up:\n%s", n.name, n.c.bin, n.configFile, tail)
		default:
		}
		if b, err := os.ReadFile(n.logFile); err == nil && int64(len(b)) >= from && bytes.Contains(b[from:], []byte("Server is ready")) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("natstest: %s did not say it was ready on 127.0.0.1:%d within %s:\n%s", n.name, n.clientPort, startTimeout, tailFile(n.logFile, 20))
		}
		select {
		case <-exited:
		case <-time.After(pause):
		}
	}
}

// waitReady connects a client to the node alone and waits for nats.go to report the
// connection (the server's INFO, the handshake, authentication and TLS all done).
func (n *Node) waitReady() {
	n.c.t.Helper()
	connected := make(chan struct{})
	var once sync.Once
	nc, err := nats.Connect(n.URL(), append(n.c.ConnectOptions(),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.DontRandomize(),
		nats.ConnectHandler(func(*nats.Conn) { once.Do(func() { close(connected) }) }))...)
	if err != nil {
		n.c.t.Fatalf("natstest: connect to %s (%s): %v", n.name, n.URL(), err)
	}
	defer nc.Close()
	if nc.IsConnected() {
		return
	}
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	select {
	case <-connected:
	case <-exited:
		n.c.t.Fatalf("natstest: %s exited before it accepted a client:\n%s", n.name, tailFile(n.logFile, 20))
	case <-time.After(startTimeout):
		n.c.t.Fatalf("natstest: %s (%s) accepted no client within %s (last error %v):\n%s", n.name, n.URL(), startTimeout, nc.LastError(), tailFile(n.logFile, 20))
	}
}

// waitJetStream waits until the node's JetStream answers an account info request, which in
// a cluster only the meta leader does.
func (n *Node) waitJetStream() {
	n.c.t.Helper()
	nc, err := nats.Connect(n.URL(), n.c.ConnectOptions()...)
	if err != nil {
		n.c.t.Fatalf("natstest: connect to %s (%s): %v", n.name, n.URL(), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		n.c.t.Fatalf("natstest: jetstream on %s: %v", n.name, err)
	}
	testwait.For(n.c.t, fmt.Sprintf("JetStream on %s (%s) to reach a meta leader", n.name, n.URL()), startTimeout, func() error {
		if !n.Running() {
			return testwait.Stop(fmt.Errorf("%s exited:\n%s", n.name, tailFile(n.logFile, 20)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err
	})
}

// freePorts returns n distinct ports on 127.0.0.1 that nothing listened on a moment ago
// (the kernel's pick for port 0).
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("natstest: pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// processState is the state letter of process pid in /proc (R, S, T, Z, ...).
func processState(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) == 0 {
		return "", fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	return f[0], nil
}

// tailFile is the last n lines of path (or why it cannot be read).
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

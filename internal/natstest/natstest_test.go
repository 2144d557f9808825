package natstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testwait"
)

// text returns n lines of distinct text, "line <i> of <tag>".
func text(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "line %d of %s\n", i, tag)
	}
	return b.String()
}

// checkRead fails t unless got holds exactly want's subjects and data, in stream order.
func checkRead(t *testing.T, got, want []Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d messages back, published %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Subject != want[i].Subject || string(got[i].Data) != string(want[i].Data) || got[i].Sequence != want[i].Sequence {
			t.Fatalf("message %d: read %s #%d %q, published %s #%d %q", i, got[i].Subject, got[i].Sequence, got[i].Data, want[i].Subject, want[i].Sequence, want[i].Data)
		}
	}
}

// gone reports whether process pid has exited and been reaped.
func gone(pid int) error {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("process %d still exists", pid)
}

// TestSingleNodeUpDown: one node takes a text on four partition subjects and gives it back,
// per subject range too; killed, it refuses clients; restarted on the same port and store
// dir, it still holds every message; when the test ends, its process is gone.
func TestSingleNodeUpDown(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		c := StartServer(t, Options{})
		js := c.JetStream(t)
		CreateStream(t, js, jetstream.StreamConfig{Name: "in", Subjects: []string{"in.>"}})
		pub := PublishText(t, js, "in", 4, text("a", 101))
		for i, m := range pub {
			if want := "in." + strconv.Itoa(i%4); m.Subject != want {
				t.Fatalf("line %d went to %s, want %s", i, m.Subject, want)
			}
		}
		checkRead(t, ReadAll(t, js, "in"), pub)
		var two []Message
		for _, m := range pub {
			if m.Subject == "in.2" {
				two = append(two, m)
			}
		}
		checkRead(t, ReadAll(t, js, "in", "in.2"), two)

		nd := c.Node(0)
		nd.Kill()
		if nd.Running() {
			t.Fatal("the node runs after Kill")
		}
		if _, err := nats.Connect(nd.URL()); err == nil {
			t.Fatalf("a client connected to %s after the kill", nd.URL())
		}
		nd.Restart()
		checkRead(t, ReadAll(t, c.JetStream(t), "in"), pub)
		if _, err := os.Stat(filepath.Join(nd.StoreDir(), "jetstream")); err != nil {
			t.Fatalf("the node's store dir: %v", err)
		}
		if log, _ := os.ReadFile(nd.LogFile()); strings.Count(string(log), "Starting nats-server") != 2 {
			t.Fatalf("the node's log does not show two starts:\n%s", log)
		}
		pid = nd.PID()
	})
	testwait.For(t, "the server's process to be gone once its test ended", 5*time.Second, func() error { return gone(pid) })
}

// TestClusterKeepsAnR3StreamThroughAKill: in a 3-node cluster, an R3 stream keeps taking
// publishes after its leader is SIGKILLed; the killed node, restarted with the same store
// dir and ports, catches up: made the stream's leader, it serves every message.
func TestClusterKeepsAnR3StreamThroughAKill(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := StartCluster(t, 3, Options{SyncAlways: true})
		names := map[string]bool{}
		for _, nd := range c.Nodes() {
			names[nd.Name()] = true
		}
		if len(names) != 3 {
			t.Fatalf("server names %v are not unique", names)
		}
		js := c.JetStream(t, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		s := CreateStream(t, js, jetstream.StreamConfig{Name: "r3", Subjects: []string{"in.>"}, Replicas: 3})
		before := PublishText(t, js, "in", 4, text("before", 200))

		leader := c.NodeNamed(streamInfo(t, s).Cluster.Leader)
		if leader == nil {
			t.Fatalf("the stream's leader %q is none of the nodes", streamInfo(t, s).Cluster.Leader)
		}
		leader.Kill()
		// The two others elect a new leader of the stream (and of JetStream's meta group,
		// which answers consumer creation, if the killed node led that too) and take
		// publishes again.
		c.WaitMetaLeader()
		testwait.For(t, "a new leader of the stream among the two nodes left", 30*time.Second, func() error {
			info, err := s.Info(context.Background())
			if err != nil {
				return err
			}
			if info.Cluster.Leader == "" || info.Cluster.Leader == leader.Name() {
				return fmt.Errorf("leader %q", info.Cluster.Leader)
			}
			return nil
		})
		after := PublishText(t, js, "in", 4, text("after", 200))
		all := append(append([]Message{}, before...), after...)
		checkRead(t, ReadAll(t, js, "r3"), all)

		leader.Restart()
		testwait.For(t, "the restarted node to catch up", 30*time.Second, func() error {
			info, err := s.Info(context.Background())
			if err != nil {
				return err
			}
			for _, r := range info.Cluster.Replicas {
				if r.Name == leader.Name() && r.Current && r.Lag == 0 {
					return nil
				}
			}
			return fmt.Errorf("replicas %+v", info.Cluster.Replicas)
		})
		stepDownTo(t, c.Connect(t), s, leader.Name())
		checkRead(t, ReadAll(t, js, "r3"), all)
		for _, nd := range c.Nodes() {
			pids = append(pids, nd.PID())
		}
	})
	for _, pid := range pids {
		testwait.For(t, "the cluster's processes to be gone once its test ended", 5*time.Second, func() error { return gone(pid) })
	}
}

func streamInfo(t *testing.T, s jetstream.Stream) *jetstream.StreamInfo {
	t.Helper()
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// stepDownTo asks the stream's leader to step down in favour of the node named preferred,
// until that node leads the stream.
func stepDownTo(t *testing.T, nc *nats.Conn, s jetstream.Stream, preferred string) {
	t.Helper()
	name := s.CachedInfo().Config.Name
	req, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": preferred}})
	testwait.For(t, "node "+preferred+" to lead stream "+name, 30*time.Second, func() error {
		info, err := s.Info(context.Background())
		if err != nil {
			return err
		}
		if info.Cluster.Leader == preferred {
			return nil
		}
		resp, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+name, req, 5*time.Second)
		if err != nil {
			return err
		}
		return fmt.Errorf("leader %s; step-down answered %s", info.Cluster.Leader, resp.Data)
	})
}

// TestFrozenNodeIsNoticedByADeadline: a publish to a SIGSTOPped node fails when the
// client's deadline passes, not later; thawed, the node takes the next publish.
func TestFrozenNodeIsNoticedByADeadline(t *testing.T) {
	c := StartServer(t, Options{})
	nd := c.Node(0)
	js, err := jetstream.New(nd.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	CreateStream(t, js, jetstream.StreamConfig{Name: "in", Subjects: []string{"in.>"}})
	nd.Stop()
	const deadline = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err = js.Publish(ctx, "in.0", []byte("frozen"))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("publish to a frozen server: %v, want the deadline exceeded", err)
	}
	if took > deadline+2*time.Second {
		t.Fatalf("publish to a frozen server failed after %s; its deadline was %s", took, deadline)
	}
	nd.Cont()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if _, err := js.Publish(ctx2, "in.0", []byte("thawed")); err != nil {
		t.Fatalf("publish after SIGCONT: %v", err)
	}
}

// TestOptionsReachTheServer: credentials (user and password, or a token), TLS with the
// test's CA, max_payload and the atomic batch size limit are what the server enforces.
func TestOptionsReachTheServer(t *testing.T) {
	t.Run("user and TLS", func(t *testing.T) {
		c := StartServer(t, Options{User: "flow", Password: "s3cret-pw", TLS: true, MaxPayload: 4096})
		url := c.Node(0).URL()
		if !strings.HasPrefix(url, "tls://") {
			t.Fatalf("URL %s with TLS", url)
		}
		if _, err := nats.Connect(url, nats.RootCAs(c.CAFile())); !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("connect without credentials: %v, want an authorization violation", err)
		}
		if _, err := nats.Connect(url, nats.UserInfo("flow", "s3cret-pw")); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("connect without the CA: %v, want a certificate error", err)
		}
		nc := c.Connect(t)
		if got := nc.MaxPayload(); got != 4096 {
			t.Fatalf("max payload %d, want 4096", got)
		}
		if !nc.TLSRequired() {
			t.Fatal("the connection is not over TLS")
		}
	})
	t.Run("token", func(t *testing.T) {
		c := StartServer(t, Options{Token: "tok-123"})
		if _, err := nats.Connect(c.URL(), nats.Token("wrong")); !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("connect with a wrong token: %v, want an authorization violation", err)
		}
		c.Connect(t)
	})
	t.Run("batch limit", func(t *testing.T) {
		c := StartServer(t, Options{BatchMaxMsgs: 3, BatchMaxInflight: 2, BatchTimeout: 5 * time.Second})
		nc := c.Connect(t)
		CreateStream(t, c.JetStream(t), jetstream.StreamConfig{Name: "out", Subjects: []string{"out.>"}, AllowAtomicPublish: true})
		if err := atomicBatch(nc, "b1", 3); err != nil {
			t.Fatalf("a batch of 3 with max_msgs 3: %v", err)
		}
		if err := atomicBatch(nc, "b2", 4); err == nil || !strings.Contains(err.Error(), "10199") {
			t.Fatalf("a batch of 4 with max_msgs 3: %v, want error 10199 (batch too large)", err)
		}
	})
}

// atomicBatch publishes n messages on out.x as one atomic batch (the headers of JetStream's
// atomic publish), and returns the server's error for its commit, if any.
func atomicBatch(nc *nats.Conn, id string, n int) error {
	var last *nats.Msg
	for i := 1; i <= n; i++ {
		m := nats.NewMsg("out.x")
		m.Data = []byte(fmt.Sprintf("%s %d", id, i))
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i))
		if i < n {
			if err := nc.PublishMsg(m); err != nil {
				return err
			}
			continue
		}
		m.Header.Set("Nats-Batch-Commit", "1")
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			return err
		}
		last = resp
	}
	var ack struct {
		Error *struct {
			Code        int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		BatchSize int `json:"count"`
	}
	if err := json.Unmarshal(last.Data, &ack); err != nil {
		return fmt.Errorf("commit answered %q: %w", last.Data, err)
	}
	if ack.Error != nil {
		return fmt.Errorf("error %d: %s", ack.Error.Code, ack.Error.Description)
	}
	return nil
}

// TestBinaryNamesTheVariable: a FLOWSTATE_NATS_SERVER that names no file fails the test,
// naming the variable and the path.
func TestBinaryNamesTheVariable(t *testing.T) {
	t.Setenv(ServerEnv, "/nonexistent/nats-server")
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Binary(ft)
	}()
	<-done
	if !strings.Contains(ft.msg, ServerEnv) || !strings.Contains(ft.msg, "/nonexistent/nats-server") {
		t.Fatalf("Binary with a bad %s failed with %q", ServerEnv, ft.msg)
	}
}

// fatalRecorder records the message of a Fatalf and ends its goroutine, as t.Fatalf does,
// without failing the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

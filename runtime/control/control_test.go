package control

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/sdk"
)

// listen serves job wc on a free loopback port with open reads (a runner's default on
// loopback), its token file in a temporary runtime directory, and returns it with a
// client that sends its token.
func listen(t *testing.T) (*Server, *Client, <-chan struct{}) {
	t.Helper()
	return listenWith(t, Options{OpenReads: true})
}

// listenWith is listen with options o (Address, Job and Cancel are set here).
func listenWith(t *testing.T, o Options) (*Server, *Client, <-chan struct{}) {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	cancelled := make(chan struct{})
	o.Address, o.Job, o.Cancel = "127.0.0.1:0", "wc", func() { close(cancelled) }
	s, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	tok, err := ReadTokenFile(s.TokenFile(), "token file")
	if err != nil {
		t.Fatal(err)
	}
	return s, NewClient(s.Addr(), tok, "the test", nil), cancelled
}

func TestJobAnswersItsName(t *testing.T) {
	_, c, _ := listen(t)
	info, err := c.Job(context.Background())
	if err != nil || info.Job != "wc" || info.PID != os.Getpid() {
		t.Fatalf("Job = %+v, %v; want wc and this pid", info, err)
	}
}

func TestCancelOfAnotherJobIsRefused(t *testing.T) {
	_, c, cancelled := listen(t)
	err := c.Cancel(context.Background(), "other")
	if err == nil || !strings.Contains(err.Error(), `job "wc", not job "other"`) {
		t.Fatalf("Cancel of another job = %v; want a refusal naming both jobs", err)
	}
	resp, err := c.call(context.Background(), CancelPath, CancelRequest{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("cancel naming no job: %s; want 400", resp.Status)
	}
	select {
	case <-cancelled:
		t.Fatal("a refused request cancelled the job")
	default:
	}
	if err := c.Cancel(context.Background(), "wc"); err != nil {
		t.Fatalf("Cancel of the job: %v", err)
	}
	<-cancelled
}

func TestSavepointOfAnotherJobIsRefused(t *testing.T) {
	s, c, _ := listen(t)
	_, err := c.TriggerSavepoint(context.Background(), SavepointRequest{Job: "other"})
	if err == nil || !strings.Contains(err.Error(), `job "wc", not job "other"`) {
		t.Fatalf("savepoint of another job = %v; want a refusal naming both jobs", err)
	}
	go func() {
		req := <-s.Savepoints()
		req.Reply <- dataflow.SavepointResult{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "/sp/1"}}
	}()
	if ptr, err := c.TriggerSavepoint(context.Background(), SavepointRequest{Job: "wc"}); err != nil || ptr != "/sp/1" {
		t.Fatalf("savepoint of the job = %q, %v; want /sp/1", ptr, err)
	}
}

// TestDrainReachesTheJobAsAStop: a drain request reaches the job as a stop with Drain set,
// with its target, and its answer is the job's.
func TestDrainReachesTheJobAsAStop(t *testing.T) {
	s, c, _ := listen(t)
	got := make(chan dataflow.SavepointRequest, 1)
	go func() {
		req := <-s.Savepoints()
		got <- req
		req.Reply <- dataflow.SavepointResult{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "/sp/drained"}}
	}()
	ptr, err := c.TriggerSavepoint(context.Background(), SavepointRequest{Job: "wc", Target: "/sp", Drain: true})
	if err != nil || ptr != "/sp/drained" {
		t.Fatalf("drain = %q, %v; want /sp/drained", ptr, err)
	}
	if req := <-got; !req.Drain || !req.Stop || req.Target != "/sp" {
		t.Fatalf("the job got %+v; want a stop with Drain and target /sp", req)
	}
}

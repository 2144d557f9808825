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

func listen(t *testing.T) (*Server, <-chan struct{}) {
	t.Helper()
	cancelled := make(chan struct{})
	s, err := Listen("127.0.0.1:0", "wc", func() { close(cancelled) }, nil, func(string, string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, cancelled
}

func TestJobAnswersItsName(t *testing.T) {
	s, _ := listen(t)
	info, err := Job(context.Background(), s.Addr())
	if err != nil || info.Job != "wc" || info.PID != os.Getpid() {
		t.Fatalf("Job = %+v, %v; want wc and this pid", info, err)
	}
}

func TestCancelOfAnotherJobIsRefused(t *testing.T) {
	s, cancelled := listen(t)
	err := Cancel(context.Background(), s.Addr(), "other")
	if err == nil || !strings.Contains(err.Error(), `job "wc", not job "other"`) {
		t.Fatalf("Cancel of another job = %v; want a refusal naming both jobs", err)
	}
	resp, err := call(context.Background(), s.Addr(), CancelPath, CancelRequest{})
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
	if err := Cancel(context.Background(), s.Addr(), "wc"); err != nil {
		t.Fatalf("Cancel of the job: %v", err)
	}
	<-cancelled
}

func TestSavepointOfAnotherJobIsRefused(t *testing.T) {
	s, _ := listen(t)
	_, err := TriggerSavepoint(context.Background(), s.Addr(), SavepointRequest{Job: "other"})
	if err == nil || !strings.Contains(err.Error(), `job "wc", not job "other"`) {
		t.Fatalf("savepoint of another job = %v; want a refusal naming both jobs", err)
	}
	go func() {
		req := <-s.Savepoints()
		req.Reply <- dataflow.SavepointResult{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "/sp/1"}}
	}()
	if ptr, err := TriggerSavepoint(context.Background(), s.Addr(), SavepointRequest{Job: "wc"}); err != nil || ptr != "/sp/1" {
		t.Fatalf("savepoint of the job = %q, %v; want /sp/1", ptr, err)
	}
}

// TestDrainReachesTheJobAsAStop: a drain request reaches the job as a stop with Drain set,
// with its target, and its answer is the job's.
func TestDrainReachesTheJobAsAStop(t *testing.T) {
	s, _ := listen(t)
	got := make(chan dataflow.SavepointRequest, 1)
	go func() {
		req := <-s.Savepoints()
		got <- req
		req.Reply <- dataflow.SavepointResult{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "/sp/drained"}}
	}()
	ptr, err := TriggerSavepoint(context.Background(), s.Addr(), SavepointRequest{Job: "wc", Target: "/sp", Drain: true})
	if err != nil || ptr != "/sp/drained" {
		t.Fatalf("drain = %q, %v; want /sp/drained", ptr, err)
	}
	if req := <-got; !req.Drain || !req.Stop || req.Target != "/sp" {
		t.Fatalf("the job got %+v; want a stop with Drain and target /sp", req)
	}
}

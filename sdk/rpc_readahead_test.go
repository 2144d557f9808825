package sdk

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// orderState is a StateBackend whose keyed backend records the calls it gets, and holds a
// write of the value "block" until release is closed.
type orderState struct {
	mapState
	blocked, release chan struct{}
	mu               sync.Mutex
	calls            []string
}

func (s *orderState) CreateKeyedStateBackend(context.Context, KeyedBackendParams) (KeyedStateBackend, error) {
	return orderKeyed{mapKeyed{&s.mapState}, s}, nil
}

func (s *orderState) record(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

type orderKeyed struct {
	mapKeyed
	s *orderState
}

func (k orderKeyed) Write(ctx context.Context, muts []Mutation) error {
	k.s.record("write " + string(muts[0].Value))
	if string(muts[0].Value) == "block" {
		close(k.s.blocked)
		<-k.s.release
	}
	return k.mapKeyed.Write(ctx, muts)
}

func (k orderKeyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	k.s.record("get")
	return k.mapKeyed.Get(ctx, keys)
}

// TestReadGoesAheadOfQueuedWrites: a read the host starts while writes are in flight is
// answered after the write the plugin is applying, before the writes queued behind it.
func TestReadGoesAheadOfQueuedWrites(t *testing.T) {
	st := &orderState{mapState: mapState{m: map[string]string{}}, blocked: make(chan struct{}), release: make(chan struct{})}
	srv := &backendServer{impl: st}
	kb, err := serveBackend(t, srv).CreateKeyedStateBackend(context.Background(), KeyedBackendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(st.release) }) }
	defer release() // before Close, when the test fails early
	pw := kb.(PipelinedWriter)
	ctx := context.Background()
	w1 := pw.StartWrite(ctx, []Mutation{{Key: []byte("k"), Value: []byte("block")}})
	<-st.blocked
	w2 := pw.StartWrite(ctx, []Mutation{{Key: []byte("k"), Value: []byte("2")}})
	read := pw.StartRead(ctx, [][]byte{[]byte("other")})
	served, ok := srv.backends.Get(kb.(pipelinedKeyedClient).id)
	if !ok {
		t.Fatal("the keyed backend is not served")
	}
	deadline := time.Now().Add(5 * time.Second)
	for served.mu.UrgentWaiting() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the read never reached the plugin")
		}
		time.Sleep(time.Millisecond)
	}
	release()
	vals, err := read()
	if err != nil || len(vals) != 1 || vals[0] != nil {
		t.Fatalf("read: %q, %v; want one absent value", vals, err)
	}
	for i, w := range []func() error{w1, w2} {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if got := strings.Join(st.calls, ", "); got != "write block, get, write 2" {
		t.Fatalf("calls in the plugin: %s; want the read between the running write and the queued one", got)
	}
}

// pipelineOnlyServer plays a plugin of the SDK before reads ahead: it serves Pipeline but
// does not keep its calls one at a time, so the host must read on the pipeline.
type pipelineOnlyServer struct {
	*backendServer
	unaryGets atomic.Int32
}

func (p *pipelineOnlyServer) CreateKeyedBackend(ctx context.Context, req *pb.CreateKeyedBackendRequest) (*pb.CreateKeyedBackendResponse, error) {
	r, err := p.backendServer.CreateKeyedBackend(ctx, req)
	if r != nil {
		r.ReadsAhead = false
	}
	return r, err
}

func (p *pipelineOnlyServer) Get(ctx context.Context, req *pb.GetRequest) (*pb.GetResponse, error) {
	p.unaryGets.Add(1)
	return p.backendServer.Get(ctx, req)
}

// TestReadsStayOnThePipelineForOlderPlugins: with a plugin that does not read ahead, a
// read travels on the pipeline behind the writes, never as a call of its own.
func TestReadsStayOnThePipelineForOlderPlugins(t *testing.T) {
	srv := &pipelineOnlyServer{backendServer: &backendServer{impl: &mapState{m: map[string]string{}}}}
	kb, err := serveBackend(t, srv).CreateKeyedStateBackend(context.Background(), KeyedBackendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	pw := kb.(PipelinedWriter)
	ctx := context.Background()
	w := pw.StartWrite(ctx, []Mutation{{Key: []byte("k"), Value: []byte("1")}})
	vals, err := pw.StartRead(ctx, [][]byte{[]byte("k")})()
	if err != nil || len(vals) != 1 || string(vals[0]) != "1" {
		t.Fatalf("read behind a write: %q, %v; want \"1\"", vals, err)
	}
	if err := w(); err != nil {
		t.Fatal(err)
	}
	if n := srv.unaryGets.Load(); n != 0 {
		t.Fatalf("%d Get calls of their own to a plugin that does not read ahead", n)
	}
}

package server

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// These tests drive the plugin end with the protocol's raw messages; the host end
// (sdk/internal/client) is tested against real plugin processes in sdk/host.

// mapState is the smallest StateBackend: one map per keyed backend. Its keyed backend
// records the calls it gets, and holds a write of the value "block" until release is
// closed.
type mapState struct {
	mu               sync.Mutex
	m                map[string]string
	calls            []string
	failWrites       bool
	blocked, release chan struct{}
}

func newMapState() *mapState {
	return &mapState{m: map[string]string{}, blocked: make(chan struct{}), release: make(chan struct{})}
}

func (s *mapState) PluginInfo() sdk.PluginInfo                   { return sdk.PluginInfo{Name: "map", Version: "0"} }
func (s *mapState) Configure(context.Context, sdk.Options) error { return nil }
func (s *mapState) CreateKeyedStateBackend(context.Context, sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	return mapKeyed{s}, nil
}

func (s *mapState) record(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

type mapKeyed struct{ s *mapState }

func (k mapKeyed) Write(_ context.Context, muts []sdk.Mutation) error {
	k.s.record("write " + string(muts[0].Value))
	if string(muts[0].Value) == "block" {
		close(k.s.blocked)
		<-k.s.release
	}
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if k.s.failWrites {
		return errors.New("disk on fire")
	}
	for _, m := range muts {
		k.s.m[string(m.Key)] = string(m.Value)
	}
	return nil
}

func (k mapKeyed) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	k.s.record("get")
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, key := range keys {
		if v, ok := k.s.m[string(key)]; ok {
			out[i] = []byte(v)
		}
	}
	return out, nil
}

func (mapKeyed) Scan(context.Context, []byte, []byte, int) ([]sdk.KV, error) {
	return nil, sdk.ErrUnsupported
}
func (mapKeyed) Snapshot(context.Context, sdk.SnapshotOptions) (sdk.Snapshot, error) {
	return nil, sdk.ErrUnsupported
}
func (mapKeyed) Restore(context.Context, []sdk.KeyedStateHandle, sdk.StateReader) error {
	return sdk.ErrUnsupported
}
func (mapKeyed) NotifyCheckpointComplete(context.Context, int64) error { return nil }
func (mapKeyed) NotifyCheckpointAborted(context.Context, int64) error  { return nil }
func (mapKeyed) Close() error                                          { return nil }

// serveBackend serves srv over an in-memory connection, with the interceptors Serve
// uses, and returns a client of it.
func serveBackend(t *testing.T, srv pb.StateBackendServer) pb.StateBackendClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer(serverOptions(sdk.Logger())...)
	pb.RegisterStateBackendServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewStateBackendClient(conn)
}

func writeOp(id uint64, value string) *pb.PipelineRequest {
	packed := wire.PackMutations(1, func(int) wire.Mutation { return wire.Mutation{Key: []byte("k"), Value: []byte(value)} })
	return &pb.PipelineRequest{BackendId: id, Op: &pb.PipelineRequest_Write{Write: &pb.WriteRequest{BackendId: id, Packed: packed}}}
}

func getOp(id uint64, keys ...string) *pb.PipelineRequest {
	g := &pb.GetRequest{BackendId: id}
	for _, k := range keys {
		g.Keys = append(g.Keys, []byte(k))
	}
	return &pb.PipelineRequest{BackendId: id, Op: &pb.PipelineRequest_Get{Get: g}}
}

// TestPipelineAppliesInOrderUntilAWriteFails: the plugin end answers the requests of a
// pipeline in order, a read sees every write sent before it, and after a failed write
// every later request gets that write's error and no write applies.
func TestPipelineAppliesInOrderUntilAWriteFails(t *testing.T) {
	impl := newMapState()
	c := serveBackend(t, &backendServer{impl: impl})
	ctx := context.Background()
	r, err := c.CreateKeyedBackend(ctx, &pb.CreateKeyedBackendRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pipeline || !r.ReadsAhead {
		t.Fatalf("CreateKeyedBackend announces pipeline %v, reads ahead %v; want both", r.Pipeline, r.ReadsAhead)
	}
	st, err := c.Pipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []*pb.PipelineRequest{writeOp(r.BackendId, "0"), writeOp(r.BackendId, "1"), writeOp(r.BackendId, "2"), getOp(r.BackendId, "k", "absent")}
	for _, m := range reqs {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range reqs {
		resp, err := st.Recv()
		if err != nil || resp.Error != nil {
			t.Fatalf("answer %d: %v, %v", i, resp, err)
		}
		if i == len(reqs)-1 {
			if g := resp.Get; g == nil || len(g.Values) != 2 || string(g.Values[0]) != "2" || len(g.Absent) != 1 || g.Absent[0] != 1 {
				t.Fatalf("a read behind three writes: %v; want \"2\" and one absent key", g)
			}
		}
	}
	impl.mu.Lock()
	impl.failWrites = true
	impl.mu.Unlock()
	for _, m := range []*pb.PipelineRequest{writeOp(r.BackendId, "x"), getOp(r.BackendId, "k"), writeOp(r.BackendId, "y")} {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
		resp, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Error == nil || !strings.Contains(resp.Error.Message, "disk on fire") {
			t.Fatalf("request behind a failed write answered %v; want the write's error", resp)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	impl.mu.Lock()
	defer impl.mu.Unlock()
	if got := strings.Join(impl.calls, ", "); got != "write 0, write 1, write 2, get, write x" {
		t.Fatalf("calls in the plugin: %s; want nothing after the failed write", got)
	}
}

// TestReadGoesAheadOfQueuedWrites: a Get that arrives while the pipeline's writes are in
// flight is answered after the write the plugin is applying, before the writes queued
// behind it.
func TestReadGoesAheadOfQueuedWrites(t *testing.T) {
	impl := newMapState()
	srv := &backendServer{impl: impl}
	c := serveBackend(t, srv)
	ctx := context.Background()
	r, err := c.CreateKeyedBackend(ctx, &pb.CreateKeyedBackendRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(impl.release) }) }
	defer release() // when the test fails early
	st, err := c.Pipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"block", "2"} {
		if err := st.Send(writeOp(r.BackendId, v)); err != nil {
			t.Fatal(err)
		}
	}
	<-impl.blocked
	read := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, &pb.GetRequest{BackendId: r.BackendId, Keys: [][]byte{[]byte("other")}})
		read <- err
	}()
	served, ok := srv.backends.Get(r.BackendId)
	if !ok {
		t.Fatal("the keyed backend is not served")
	}
	served.mu.AwaitWaiters(1, 0) // the read waits for the running write
	release()
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if resp, err := st.Recv(); err != nil || resp.Error != nil {
			t.Fatalf("write %d: %v, %v", i+1, resp, err)
		}
	}
	impl.mu.Lock()
	defer impl.mu.Unlock()
	if got := strings.Join(impl.calls, ", "); got != "write block, get, write 2" {
		t.Fatalf("calls in the plugin: %s; want the read between the running write and the queued one", got)
	}
}

// TestPanicsFailTheCall: a panic in a plugin method fails its call with an error naming
// the method, and the plugin serves on.
func TestPanicsFailTheCall(t *testing.T) {
	c := serveBackend(t, &backendServer{impl: panicState{newMapState()}})
	ctx := context.Background()
	_, err := c.CreateKeyedBackend(ctx, &pb.CreateKeyedBackendRequest{})
	if err == nil || !strings.Contains(err.Error(), "plugin panicked: no keyed backends today") || !strings.Contains(err.Error(), "CreateKeyedBackend") {
		t.Fatalf("CreateKeyedBackend of a panicking plugin: %v", err)
	}
	if _, err := c.Get(ctx, &pb.GetRequest{BackendId: 7}); !errors.Is(convert.Errors.FromStatus(err), sdk.ErrNotFound) {
		t.Fatalf("a call after the panic: %v; want sdk.ErrNotFound for an unknown backend", err)
	}
}

type panicState struct{ *mapState }

func (panicState) CreateKeyedStateBackend(context.Context, sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	panic("no keyed backends today")
}

// countingKeyed is a keyed backend that only counts the mutations it is given.
type countingKeyed struct {
	sdk.KeyedStateBackend
	n    int
	last [2]byte // the last key (test keys are two bytes); a copy allocates nothing
}

func (k *countingKeyed) Write(_ context.Context, muts []sdk.Mutation) error {
	k.n += len(muts)
	copy(k.last[:], muts[len(muts)-1].Key)
	return nil
}

// TestPipelineWritesReuseTheirMutations: a pipeline builds each write's mutations in the
// memory of the one before, so a plugin allocates nothing per mutation once it has seen
// its largest write (thousands of mutations per write made its GC a third of its CPU).
func TestPipelineWritesReuseTheirMutations(t *testing.T) {
	const n = 5000
	packed := wire.PackMutations(n, func(i int) wire.Mutation {
		return wire.Mutation{Key: []byte{byte(i >> 8), byte(i)}, Value: []byte("v")}
	})
	req := &pb.WriteRequest{BackendId: 1, Packed: packed}
	kb := &countingKeyed{}
	ctx := context.Background()
	scratch, err := writeOnPlugin(ctx, kb, req, nil)
	if err != nil || kb.n != n {
		t.Fatalf("first write: %d mutations, %v; want %d", kb.n, err, n)
	}
	allocs := testing.AllocsPerRun(20, func() {
		scratch, err = writeOnPlugin(ctx, kb, req, scratch)
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("a write of %d mutations with a grown scratch slice made %.0f allocations, want 0", n, allocs)
	}
	// AllocsPerRun makes one more run than it counts.
	if want := [2]byte{byte((n - 1) >> 8), byte((n - 1) & 0xff)}; kb.n != 22*n || kb.last != want {
		t.Errorf("backend got %d mutations ending with key %x, want %d ending with %x", kb.n, kb.last, 22*n, want)
	}
	for i, m := range scratch[:cap(scratch)] {
		if m.Key != nil || m.Value != nil {
			t.Fatalf("scratch mutation %d still refers to a request's bytes after the write", i)
		}
	}
}

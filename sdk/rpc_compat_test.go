package sdk

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// mapState is the smallest StateBackend: one map per keyed backend, writes only.
type mapState struct {
	mu         sync.Mutex
	writes     int
	m          map[string]string
	failWrites bool
}

func (s *mapState) PluginInfo() PluginInfo                   { return PluginInfo{Name: "map", Version: "0"} }
func (s *mapState) Configure(context.Context, Options) error { return nil }
func (s *mapState) CreateKeyedStateBackend(context.Context, KeyedBackendParams) (KeyedStateBackend, error) {
	return mapKeyed{s}, nil
}

type mapKeyed struct{ s *mapState }

func (k mapKeyed) Write(_ context.Context, muts []Mutation) error {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if k.s.failWrites {
		return errors.New("disk on fire")
	}
	k.s.writes++
	for _, m := range muts {
		k.s.m[string(m.Key)] = string(m.Value)
	}
	return nil
}
func (k mapKeyed) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
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
func (mapKeyed) Scan(context.Context, []byte, []byte, int) ([]KV, error) { return nil, ErrUnsupported }
func (mapKeyed) Snapshot(context.Context, SnapshotOptions) (Snapshot, error) {
	return nil, ErrUnsupported
}
func (mapKeyed) Restore(context.Context, []KeyedStateHandle, StateReader) error {
	return ErrUnsupported
}
func (mapKeyed) NotifyCheckpointComplete(context.Context, int64) error { return nil }
func (mapKeyed) NotifyCheckpointAborted(context.Context, int64) error  { return nil }
func (mapKeyed) Close() error                                          { return nil }

// oldBackendServer plays a plugin built with an SDK from before Pipeline: it neither
// serves the stream nor says it does.
type oldBackendServer struct{ *backendServer }

func (o oldBackendServer) CreateKeyedBackend(ctx context.Context, req *pb.CreateKeyedBackendRequest) (*pb.CreateKeyedBackendResponse, error) {
	r, err := o.backendServer.CreateKeyedBackend(ctx, req)
	if r != nil {
		r.Pipeline = false
	}
	return r, err
}

func (oldBackendServer) Pipeline(pb.StateBackend_PipelineServer) error {
	return status.Error(codes.Unimplemented, "a plugin of an older SDK has no Pipeline")
}

// serveBackend serves srv over an in-memory connection and returns the host's view of it.
func serveBackend(t *testing.T, srv pb.StateBackendServer) StateBackend {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer()
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
	return (&rpcClient{backend: pb.NewStateBackendClient(conn)}).StateBackend(PluginInfo{Name: "map"})
}

// TestWritesStreamOnlyToPluginsThatServeIt: a host streams writes to a plugin of this SDK
// and falls back to one Write call at a time for a plugin of an older one.
func TestWritesStreamOnlyToPluginsThatServeIt(t *testing.T) {
	for _, old := range []bool{false, true} {
		impl := &mapState{m: map[string]string{}}
		var srv pb.StateBackendServer = &backendServer{impl: impl}
		if old {
			srv = oldBackendServer{&backendServer{impl: impl}}
		}
		kb, err := serveBackend(t, srv).CreateKeyedStateBackend(context.Background(), KeyedBackendParams{})
		if err != nil {
			t.Fatal(err)
		}
		pw, streams := kb.(PipelinedWriter)
		if streams == old {
			t.Fatalf("old plugin %v: the host's keyed backend implements PipelinedWriter: %v", old, streams)
		}
		for i := range 5 {
			muts := []Mutation{{Key: []byte("k"), Value: []byte{byte('0' + i)}}}
			if streams {
				if err := pw.StartWrite(context.Background(), muts)(); err != nil {
					t.Fatal(err)
				}
			} else if err := kb.Write(context.Background(), muts); err != nil {
				t.Fatal(err)
			}
		}
		if err := kb.Close(); err != nil {
			t.Fatal(err)
		}
		impl.mu.Lock()
		if impl.writes != 5 || impl.m["k"] != "4" {
			t.Fatalf("old plugin %v: %d writes, k = %q; want 5 writes, k = \"4\"", old, impl.writes, impl.m["k"])
		}
		impl.mu.Unlock()
	}
}

// TestLocalPathsOnlyForPluginsThatReadThem: the host answers an open with a local file only
// when the plugin said it can read one; a plugin of an older SDK gets the bytes.
func TestLocalPathsOnlyForPluginsThatReadThem(t *testing.T) {
	h := StreamStateHandle{Ref: "file:///x/state", Size: 1}
	loc := locatingReader{path: "/x/state"}
	if got := localPath(context.Background(), loc, h, true); got != "/x/state" {
		t.Fatalf("plugin that reads files: local path %q, want /x/state", got)
	}
	if got := localPath(context.Background(), loc, h, false); got != "" {
		t.Fatalf("plugin of an older SDK: local path %q, want none", got)
	}
	if got := localPath(context.Background(), loc, StreamStateHandle{Inline: []byte{1}, Size: 1}, true); got != "" {
		t.Fatalf("inline handle: local path %q, want none", got)
	}
}

type locatingReader struct {
	StateReader
	path string
}

func (l locatingReader) LocalStatePath(context.Context, StreamStateHandle) (string, error) {
	return l.path, nil
}

// TestPipelinedGetSeesEarlierWrites: a read on the pipeline, sent right behind writes that
// have not been answered yet, sees them; a write that fails fails the reads behind it.
func TestPipelinedGetSeesEarlierWrites(t *testing.T) {
	impl := &mapState{m: map[string]string{}}
	kb, err := serveBackend(t, &backendServer{impl: impl}).CreateKeyedStateBackend(context.Background(), KeyedBackendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer kb.Close()
	pw := kb.(pipelinedKeyedClient)
	ctx := context.Background()
	var waits []func() error
	for i := range 4 {
		waits = append(waits, pw.StartWrite(ctx, []Mutation{{Key: []byte("k"), Value: []byte{byte('0' + i)}}}))
	}
	vals, err := pw.getAfterWrites(ctx, [][]byte{[]byte("k"), []byte("absent")})
	if err != nil {
		t.Fatal(err)
	}
	if string(vals[0]) != "3" || vals[1] != nil {
		t.Fatalf("read %q, %v behind four writes; want \"3\" and absent", vals[0], vals[1])
	}
	for i, w := range waits {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	impl.mu.Lock()
	impl.failWrites = true
	impl.mu.Unlock()
	failed := pw.StartWrite(ctx, []Mutation{{Key: []byte("k"), Value: []byte("x")}})
	if _, err := pw.getAfterWrites(ctx, [][]byte{[]byte("k")}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("a read behind a failed write: %v; want the write's error", err)
	}
	if err := failed(); err == nil {
		t.Fatal("the failed write reported no error")
	}
}

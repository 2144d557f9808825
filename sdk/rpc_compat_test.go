package sdk

import (
	"context"
	"net"
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
	mu     sync.Mutex
	writes int
	m      map[string]string
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
	k.s.writes++
	for _, m := range muts {
		k.s.m[string(m.Key)] = string(m.Value)
	}
	return nil
}
func (mapKeyed) Get(context.Context, [][]byte) ([][]byte, error)         { return nil, ErrUnsupported }
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

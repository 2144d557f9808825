package host_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// localFactory plays the runner's factory over a file:// fsstorage: its streams keep their
// bytes in memory (sdktest.MemoryStreams, which also reads them back), and it creates local
// state files (sdk.LocalStateFactory) at the paths path returns, in a directory by default.
// Publishing a file stores its bytes in the MemoryStreams, whose handle carries the size and
// checksum of the bytes really in the file, and records the writer's own.
type localFactory struct {
	*sdktest.MemoryStreams
	dir  string
	path func(n int) string // the n-th file's path; nil: a file in dir

	mu        sync.Mutex
	created   []string
	published map[string]sdk.StreamStateHandle // by path: what the writer said it wrote
	discarded []string
}

func newLocalFactory(t *testing.T) *localFactory {
	return &localFactory{MemoryStreams: sdktest.NewMemoryStreams(), dir: t.TempDir(), published: map[string]sdk.StreamStateHandle{}}
}

func (f *localFactory) CreateLocalStateFile(_ context.Context, scope sdk.Scope) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := filepath.Join(f.dir, fmt.Sprintf("state-%d", len(f.created)))
	if f.path != nil {
		p = f.path(len(f.created))
	}
	if filepath.Dir(p) == f.dir { // the others are files it cannot create
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			return "", err
		}
	}
	f.created = append(f.created, p)
	return p, nil
}

func (f *localFactory) PublishLocalStateFile(_ context.Context, path string, scope sdk.Scope, size int64, checksum uint32) (sdk.StreamStateHandle, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	f.mu.Lock()
	f.published[path] = sdk.StreamStateHandle{Size: size, Checksum: checksum}
	f.mu.Unlock()
	return f.Put(scope, b), nil
}

func (f *localFactory) DiscardLocalStateFile(_ context.Context, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.discarded = append(f.discarded, path)
	return nil
}

// snapshotOf writes n keys of about 1 KiB to a keyed backend of p, snapshots it into f and
// returns the handles and the values written.
func snapshotOf(t *testing.T, p *host.Plugin, f sdk.CheckpointStreamFactory, n int) ([]sdk.KeyedStateHandle, map[string][]byte, error) {
	t.Helper()
	ctx := ctxT(t)
	kb := newKeyed(t, p, allGroups)
	defer kb.Close()
	want := map[string][]byte{}
	var muts []sdk.Mutation
	for i := 0; i < n; i++ {
		k := key(i%128, fmt.Sprintf("k%04d", i))
		v := bytes.Repeat([]byte{byte(i)}, 1000+i%50)
		want[string(k)] = v
		muts = append(muts, sdk.Mutation{Key: k, Value: v})
	}
	if err := kb.Write(ctx, muts); err != nil {
		t.Fatal(err)
	}
	snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	handles, err := snap.Write(ctx, f)
	return handles, want, err
}

// restoreAndCheck restores handles into a new keyed backend of p and checks every value.
func restoreAndCheck(t *testing.T, p *host.Plugin, handles []sdk.KeyedStateHandle, r sdk.StateReader, want map[string][]byte) {
	t.Helper()
	ctx := ctxT(t)
	kb := newKeyed(t, p, allGroups)
	defer kb.Close()
	if err := kb.Restore(ctx, handles, r); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for k, v := range want {
		got, err := kb.Get(ctx, [][]byte{[]byte(k)})
		if err != nil || !bytes.Equal(got[0], v) {
			t.Fatalf("restored %q = %d bytes, %v; want %d bytes", k, len(got[0]), err, len(v))
		}
	}
}

// TestLocalWritesOnlyForPluginsThatAnnounceThem: a plugin of this SDK writes a snapshot to
// the local files the host's factory creates, and hands over their size and checksum,
// which match the bytes in the files; no byte goes through the host. A plugin of the
// previous protocol writes streams through the host. Both restore.
func TestLocalWritesOnlyForPluginsThatAnnounceThem(t *testing.T) {
	for _, announce := range []string{"local-writes", ""} {
		t.Run("announce="+announce, func(t *testing.T) {
			p := startPrevious(t, announce, newRecorder())
			f := newLocalFactory(t)
			handles, want, err := snapshotOf(t, p, f, 300)
			if err != nil {
				t.Fatalf("snapshot write: %v", err)
			}
			streams := len(f.Scopes())
			if announce == "" {
				if len(f.created) != 0 || streams == 0 {
					t.Fatalf("a plugin without local writes: %d local files, %d streams; want none and some", len(f.created), streams)
				}
			} else {
				if len(f.published) == 0 || len(f.published) != len(f.created) || streams != 0 {
					t.Fatalf("%d local files created, %d published, %d streams through the host; want every file published and no stream", len(f.created), len(f.published), streams)
				}
				for _, h := range handles {
					for _, nf := range h.Files {
						path := pathOf(f, nf.Handle)
						said := f.published[path]
						if said.Size != nf.Handle.Size || said.Checksum != nf.Handle.Checksum {
							t.Errorf("state file %s: the plugin said %d bytes with CRC %08x; the file holds %d bytes with CRC %08x", path, said.Size, said.Checksum, nf.Handle.Size, nf.Handle.Checksum)
						}
					}
				}
			}
			restoreAndCheck(t, p, handles, f, want)
		})
	}
}

// pathOf is the local file published as h (the MemoryStreams handle Put returned for it).
func pathOf(f *localFactory, h sdk.StreamStateHandle) string {
	for path := range f.published {
		b, err := os.ReadFile(path)
		if err == nil && int64(len(b)) == h.Size && host.Checksum(b) == h.Checksum {
			return path
		}
	}
	return ""
}

// TestLocalWriteFallsBackToTheHost: a local file the plugin cannot open (another machine's,
// here a path in no directory) goes back to the host, which discards it, and the stream's
// bytes go through the host instead.
func TestLocalWriteFallsBackToTheHost(t *testing.T) {
	p := startPrevious(t, "local-writes", newRecorder())
	f := newLocalFactory(t)
	f.path = func(n int) string { return filepath.Join(f.dir, "elsewhere", fmt.Sprintf("state-%d", n)) }
	handles, want, err := snapshotOf(t, p, f, 300)
	if err != nil {
		t.Fatalf("snapshot write: %v", err)
	}
	if len(f.created) == 0 || len(f.discarded) != len(f.created) || len(f.published) != 0 || len(f.Scopes()) == 0 {
		t.Fatalf("%d local files created, %d discarded, %d published, %d streams; want each file discarded and streams instead", len(f.created), len(f.discarded), len(f.published), len(f.Scopes()))
	}
	restoreAndCheck(t, p, handles, f, want)
}

// TestLocalWriteOnAFullDisk: writing the local file fails as on a full disk (/dev/full):
// the snapshot write fails with ENOSPC naming the file, and the host discards the file.
func TestLocalWriteOnAFullDisk(t *testing.T) {
	p := startPrevious(t, "local-writes", newRecorder())
	f := newLocalFactory(t)
	f.path = func(int) string { return "/dev/full" }
	_, _, err := snapshotOf(t, p, f, 3000) // about 3 MiB: more than the plugin buffers
	if err == nil || !strings.Contains(err.Error(), syscall.ENOSPC.Error()) || !strings.Contains(err.Error(), "/dev/full") {
		t.Fatalf("snapshot write to a full disk: %v; want ENOSPC naming the file", err)
	}
	if len(f.published) != 0 || len(f.discarded) != len(f.created) || len(f.created) == 0 {
		t.Fatalf("%d local files created, %d discarded, %d published; want each discarded", len(f.created), len(f.discarded), len(f.published))
	}
}

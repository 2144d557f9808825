package host_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/kvstream"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// The previous protocol: refprev is the SDK's reference plugin speaking protocol version 1
// as plugins built before its additions speak it (pinned to {1}, announcing no addition).
// A host of this SDK must serve it fully, through the fallbacks, and send it nothing it did
// not announce.

// additionCalls are the calls a host may make only to a plugin that announced them.
var additionCalls = []string{
	"StateBackend/Pipeline", "CheckpointStorage/ListSharedState", "CheckpointStorage/LocalStatePath",
	"CheckpointStorage/ReadLease", "CheckpointStorage/WriteLease", "CheckpointStorage/CreateLocalState",
	"CheckpointStorage/PublishLocalState", "CheckpointStorage/DiscardLocalState", "CheckpointStorage/AdoptRemoteFiles",
}

// startPrevious starts refprev with the given additions announced, observed by rec, and
// configures it.
func startPrevious(t *testing.T, announce string, rec *recorder) *host.Plugin {
	t.Helper()
	t.Setenv("FLOWSTATE_TESTPLUGIN_ANNOUNCE", announce) // the plugin inherits the host's environment
	p := startPlugin(t, "refprev", observed(rec), func(c *host.Config) { c.Protocols = []int{host.ProtocolVersion, host.ProtocolVersion + 1} })
	if err := p.Configure(ctxT(t), sdk.Options{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPreviousProtocolPassesTheKit runs the conformance kit through a plugin of the
// previous protocol, started by a host that speaks this protocol and the next.
func TestPreviousProtocolPassesTheKit(t *testing.T) {
	rec := newRecorder()
	t.Run("StateBackend", func(t *testing.T) {
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			p := startPrevious(t, "", rec)
			if got := p.Info().Protocol; got != 1 {
				t.Fatalf("negotiated protocol %d, want 1", got)
			}
			sb, _ := p.StateBackend()
			return sb
		})
	})
	t.Run("CheckpointStorage", func(t *testing.T) {
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			cs, _ := startPrevious(t, "", rec).CheckpointStorage()
			return cs
		})
	})
	for _, m := range additionCalls {
		if sent, _, _ := rec.counts(m); sent != 0 {
			t.Errorf("the host sent %d messages of %s to a plugin that did not announce it", sent, m)
		}
	}
	if sent, _, _ := rec.counts("StateBackend/Write"); sent == 0 {
		t.Error("the kit wrote nothing through StateBackend/Write")
	}
}

// TestWritesStreamOnlyToPluginsThatAnnounceIt: a plugin of this SDK gets a keyed backend's
// writes down one Pipeline stream; one of the previous protocol gets one Write call at a
// time, and its keyed backend is no host.PipelinedWriter.
func TestWritesStreamOnlyToPluginsThatAnnounceIt(t *testing.T) {
	for _, name := range []string{"mem", "refprev"} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			var p *host.Plugin
			if name == "refprev" {
				p = startPrevious(t, "", rec)
			} else {
				p = startPlugin(t, name, observed(rec))
			}
			kb := newKeyed(t, p, allGroups)
			ctx := ctxT(t)
			pw, streams := kb.(host.PipelinedWriter)
			if streams != (name == "mem") {
				t.Fatalf("the keyed backend is a host.PipelinedWriter: %v", streams)
			}
			for i := range 5 {
				muts := []sdk.Mutation{{Key: key(1, "k"), Value: []byte{byte('0' + i)}}}
				if streams {
					if err := pw.StartWrite(ctx, muts)(); err != nil {
						t.Fatal(err)
					}
				} else if err := kb.Write(ctx, muts); err != nil {
					t.Fatal(err)
				}
			}
			vals, err := kb.Get(ctx, [][]byte{key(1, "k")})
			if err != nil || string(vals[0]) != "4" {
				t.Fatalf("after five writes: %q, %v; want \"4\"", vals, err)
			}
			if err := kb.Close(); err != nil {
				t.Fatal(err)
			}
			pipelined, _, _ := rec.counts("StateBackend/Pipeline")
			unary, _, _ := rec.counts("StateBackend/Write")
			if streams && (pipelined != 5 || unary != 0) || !streams && (pipelined != 0 || unary != 5) {
				t.Errorf("%d writes on the pipeline and %d Write calls", pipelined, unary)
			}
		})
	}
}

// TestReadsStayOnThePipelineForPluginsThatDoNotReadAhead: a plugin that serves the
// pipeline but does not keep its calls one at a time itself (built between those two
// additions) gets reads on the pipeline, behind the writes, which they see; never a Get
// call of their own.
func TestReadsStayOnThePipelineForPluginsThatDoNotReadAhead(t *testing.T) {
	rec := newRecorder()
	p := startPrevious(t, "pipeline", rec)
	kb := newKeyed(t, p, allGroups)
	defer kb.Close()
	pw, ok := kb.(host.PipelinedWriter)
	if !ok {
		t.Fatal("a plugin that announces the pipeline gets no host.PipelinedWriter")
	}
	ctx := ctxT(t)
	var waits []func() error
	for i := range 4 {
		waits = append(waits, pw.StartWrite(ctx, []sdk.Mutation{{Key: key(1, "k"), Value: []byte{byte('0' + i)}}}))
	}
	vals, err := pw.StartRead(ctx, [][]byte{key(1, "k"), key(1, "absent")})()
	if err != nil || len(vals) != 2 || string(vals[0]) != "3" || vals[1] != nil {
		t.Fatalf("a read behind four writes: %q, %v; want \"3\" and absent", vals, err)
	}
	for i, w := range waits {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if sent, _, _ := rec.counts("StateBackend/Get"); sent != 0 {
		t.Errorf("%d Get calls to a plugin that does not read ahead", sent)
	}
	if sent, _, _ := rec.counts("StateBackend/Pipeline"); sent != 5 {
		t.Errorf("%d messages on the pipeline, want four writes and a read", sent)
	}
}

// locatingReader is a StateReader over files that also locates them (as fsstorage's
// reader does on file://); it counts the handles it opens.
type locatingReader struct {
	dir    string
	opened atomic.Int32
}

func (r *locatingReader) Open(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	r.opened.Add(1)
	f, err := os.Open(filepath.Join(r.dir, h.Ref))
	if err != nil {
		return nil, err
	}
	return host.VerifyingReader(f, h), nil
}

func (r *locatingReader) LocalStatePath(_ context.Context, h sdk.StreamStateHandle) (string, error) {
	return filepath.Join(r.dir, h.Ref), nil
}

// TestLocalReadsOnlyForPluginsThatAnnounceThem: a plugin of this SDK restores a handle
// the host locates in a local file by reading the file itself; one of the previous
// protocol gets the bytes through the host.
func TestLocalReadsOnlyForPluginsThatAnnounceThem(t *testing.T) {
	var buf bytes.Buffer
	w := kvstream.NewWriter(&buf)
	for _, k := range []string{"a", "b", "c"} {
		if err := w.Write(key(2, k), []byte("value-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.kv"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	h := sdk.StreamStateHandle{Ref: "state.kv", Size: int64(buf.Len()), Checksum: host.Checksum(buf.Bytes())}
	handles := []sdk.KeyedStateHandle{{KeyGroups: allGroups, Format: sdk.FormatCanonical, Files: []sdk.NamedStateHandle{{Name: "kv", Handle: h}}}}
	for _, c := range []struct {
		announce string
		opened   int32
	}{{"local-reads", 0}, {"", 1}} {
		t.Run("announce="+c.announce, func(t *testing.T) {
			p := startPrevious(t, c.announce, newRecorder())
			r := &locatingReader{dir: dir}
			kb := newKeyed(t, p, allGroups)
			defer kb.Close()
			if err := kb.Restore(ctxT(t), handles, r); err != nil {
				t.Fatal(err)
			}
			if got := r.opened.Load(); got != c.opened {
				t.Errorf("the host opened %d handles for the plugin, want %d", got, c.opened)
			}
			vals, err := kb.Get(ctxT(t), [][]byte{key(2, "b")})
			if err != nil || string(vals[0]) != "value-b" {
				t.Errorf("restored b = %q, %v", vals, err)
			}
		})
	}
}

// TestAccessInterfacesOnlyWhenAnnounced: the host's access implements the optional
// interfaces of the plugin's access only when the plugin says which it implements.
func TestAccessInterfacesOnlyWhenAnnounced(t *testing.T) {
	for _, announce := range []string{"access-interfaces", ""} {
		t.Run("announce="+announce, func(t *testing.T) {
			cs, _ := startPrevious(t, announce, newRecorder()).CheckpointStorage()
			a, err := cs.CreateCheckpointStorage(ctxT(t), "job")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, leases := a.(sdk.LeaseStore)
			if leases != (announce != "") {
				t.Errorf("the access implements sdk.LeaseStore: %v", leases)
			}
			if leases {
				if _, err := a.(sdk.LeaseStore).WriteLease(ctxT(t), []byte("holder"), ""); err != nil {
					t.Errorf("WriteLease of a new record: %v", err)
				}
			}
		})
	}
}

// TestRemoteFilesOnlyWhenAnnounced: the host's access takes over remote files
// (sdk.RemoteFileAdopter) only when the plugin says its access does, and then through the
// plugin's: a local file adopted there reads back through the access and is deleted by
// DiscardState.
func TestRemoteFilesOnlyWhenAnnounced(t *testing.T) {
	for _, announce := range []string{"access-interfaces,remote-files", "access-interfaces"} {
		t.Run("announce="+announce, func(t *testing.T) {
			cs, _ := startPrevious(t, announce, newRecorder()).CheckpointStorage()
			a, err := cs.CreateCheckpointStorage(ctxT(t), "job")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			r, adopts := a.(sdk.RemoteFileAdopter)
			if adopts != strings.Contains(announce, "remote-files") {
				t.Fatalf("the access implements sdk.RemoteFileAdopter: %v", adopts)
			}
			if !adopts {
				return
			}
			path := filepath.Join(t.TempDir(), "000001.ldb")
			if err := os.WriteFile(path, []byte("table bytes"), 0o644); err != nil {
				t.Fatal(err)
			}
			hs, err := r.AdoptRemoteFiles(ctxT(t), []sdk.StreamStateHandle{{Ref: "file://" + path, Size: 11, Checksum: host.Checksum([]byte("table bytes"))}})
			if err != nil || len(hs) != 1 || hs[0].Scope != sdk.ScopeShared {
				t.Fatalf("AdoptRemoteFiles = %+v, %v", hs, err)
			}
			rc, err := a.OpenState(ctxT(t), hs[0])
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if string(b) != "table bytes" {
				t.Fatalf("the adopted file reads %q", b)
			}
			if err := a.DiscardState(ctxT(t), hs); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("DiscardState left the adopted file: %v", err)
			}
		})
	}
}

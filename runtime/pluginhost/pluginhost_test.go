package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/testplugins"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

var builtDir string

func TestMain(m *testing.M) { testplugins.Main(m, &builtDir, testplugins.Names...) }

// pluginDir returns a fresh plugin directory holding the named test plugins.
func pluginDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	testplugins.Link(t, dir, builtDir, names...)
	return dir
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenReuseRestartKill(t *testing.T) {
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem", "memstorage")})
	defer h.Close()
	ctx := ctxT(t)
	in, err := h.Open(ctx, "mem")
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Open(ctx, "mem")
	if err != nil || again != in {
		t.Fatalf("second Open = %p, %v; want the same instance %p", again, err, in)
	}
	if in.Name() != "mem" || in.Info().Version != "0.1.0" || !in.Alive() {
		t.Errorf("instance %s info %+v alive %v", in.Name(), in.Info(), in.Alive())
	}
	if _, ok := in.StateBackend(); !ok {
		t.Error("mem has no state backend")
	}
	pid := in.Pid()
	in.Kill()
	select {
	case <-in.Done():
	case <-time.After(time.Minute):
		t.Fatal("Done not closed after Kill")
	}
	if in.Alive() || in.ExitError() == nil {
		t.Errorf("after Kill: alive %v, exit error %v", in.Alive(), in.ExitError())
	}
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !in.Alive() || in.Pid() == pid {
		t.Errorf("after Restart: alive %v pid %d (was %d)", in.Alive(), in.Pid(), pid)
	}
	if err := in.Configure(ctx, sdk.Options{"greeting": "again"}); err != nil {
		t.Error(err)
	}
	st, err := h.Open(ctx, "memstorage")
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, i := range []*pluginhost.Instance{in, st} {
		if i.Alive() {
			t.Errorf("%s runs after Close", i.Name())
		}
	}
	if _, err := h.Open(ctx, "mem"); err == nil {
		t.Error("Open after Close succeeded")
	}
}

func TestUnknownPluginListsWhatIsThere(t *testing.T) {
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem", "memstorage")})
	defer h.Close()
	_, err := h.Open(ctxT(t), "hashmap")
	if !errors.Is(err, pluginhost.ErrUnknownPlugin) || !strings.Contains(err.Error(), "mem, memstorage") || !strings.Contains(err.Error(), "flowstate-plugin-hashmap") {
		t.Errorf("unknown plugin: %v", err)
	}
	if _, err := h.Open(ctxT(t), "../mem"); !errors.Is(err, pluginhost.ErrUnknownPlugin) {
		t.Errorf("bad name: %v", err)
	}
}

func TestRefusesWorldWritable(t *testing.T) {
	dir := pluginDir(t, "mem")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	h := pluginhost.New(pluginhost.Options{Dir: dir})
	defer h.Close()
	if _, err := h.Open(ctxT(t), "mem"); !errors.Is(err, pluginhost.ErrInsecure) || !strings.Contains(err.Error(), dir) {
		t.Errorf("world-writable directory: %v", err)
	}
	dir2 := t.TempDir()
	bin := filepath.Join(dir2, testplugins.Prefix+"mem")
	data, err := os.ReadFile(filepath.Join(builtDir, testplugins.Prefix+"mem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o757); err != nil {
		t.Fatal(err)
	}
	h2 := pluginhost.New(pluginhost.Options{Dir: dir2})
	defer h2.Close()
	if _, err := h2.Open(ctxT(t), "mem"); !errors.Is(err, pluginhost.ErrInsecure) || !strings.Contains(err.Error(), bin) {
		t.Errorf("world-writable binary: %v", err)
	}
}

func TestChecksumsPin(t *testing.T) {
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem"), Checksums: map[string]string{"mem": strings.Repeat("0", 64)}})
	defer h.Close()
	if _, err := h.Open(ctxT(t), "mem"); err == nil || !strings.Contains(err.Error(), strings.Repeat("0", 64)) {
		t.Errorf("pinned to a wrong hash: %v", err)
	}
}

func TestList(t *testing.T) {
	dir := pluginDir(t, "mem", "memstorage", "junk", "crash", "memv3")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := pluginhost.New(pluginhost.Options{Dir: dir})
	defer h.Close()
	ls := h.List(ctxT(t))
	byName := map[string]pluginhost.Listing{}
	for _, l := range ls {
		byName[l.Name] = l
		if len(l.SHA256) != 64 || l.Path == "" {
			t.Errorf("listing %+v lacks hash or path", l)
		}
	}
	if len(ls) != 6 {
		t.Fatalf("listed %d files, want 6: %+v", len(ls), ls)
	}
	mem := byName["mem"]
	if mem.Err != nil || mem.Version != "0.1.0" || mem.Protocol != 1 || len(mem.Kinds) != 2 {
		t.Errorf("mem listing %+v", mem)
	}
	if k := byName["memstorage"].Kinds; len(k) != 1 || k[0] != sdk.KindCheckpointStorage {
		t.Errorf("memstorage kinds %v", k)
	}
	for _, bad := range []string{"junk", "crash", "memv3", "README"} {
		if byName[bad].Err == nil {
			t.Errorf("%s listed without error", bad)
		}
	}
	missing := pluginhost.New(pluginhost.Options{Dir: filepath.Join(dir, "nope")}).List(ctxT(t))
	if len(missing) != 1 || missing[0].Err == nil {
		t.Errorf("missing directory listed as %+v", missing)
	}
}

func TestBuiltinsInProcess(t *testing.T) {
	builtins := map[string]func() sdk.Plugin{"mem": func() sdk.Plugin { return inProcess{} }, "inproc": func() sdk.Plugin { return inProcess{} }}
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem"), Builtins: builtins, InProcess: true})
	defer h.Close()
	in, err := h.Open(ctxT(t), "mem")
	if err != nil {
		t.Fatal(err)
	}
	if in.Pid() != 0 || in.Info().Path != "" || in.Info().Protocol != host.ProtocolVersion {
		t.Errorf("in-process mem: pid %d info %+v", in.Pid(), in.Info())
	}
	b, ok := in.StateBackend()
	if !ok {
		t.Fatal("no state backend")
	}
	if _, err := b.CreateKeyedStateBackend(ctxT(t), sdk.KeyedBackendParams{KeyGroups: sdk.KeyGroupRange{Start: 0, End: 1}}); err != nil {
		t.Error(err)
	}
	in.Kill()
	if in.Alive() {
		t.Error("builtin alive after Kill")
	}
	if err := in.Restart(ctxT(t)); err != nil || !in.Alive() {
		t.Errorf("builtin restart: %v, alive %v", err, in.Alive())
	}
	// Without InProcess, builtins are not used: a binary runs as a process, and a missing
	// binary is an error even when a builtin has the name.
	h2 := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem"), Builtins: builtins})
	defer h2.Close()
	if in, err := h2.Open(ctxT(t), "mem"); err != nil || in.Pid() == 0 {
		t.Errorf("mem without InProcess: pid %d, %v", in.Pid(), err)
	}
	in, err = h2.Open(ctxT(t), "inproc")
	if !errors.Is(err, pluginhost.ErrUnknownPlugin) || !strings.Contains(err.Error(), "flowstate-plugin-inproc") || strings.Contains(err.Error(), "built in") {
		t.Errorf("a builtin without its binary, InProcess unset: %v, %v; want ErrUnknownPlugin naming the missing file, listing no builtin", in, err)
	}
}

func TestPluginLogsReachTheLogger(t *testing.T) {
	var buf testwait.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Name: "runner", Level: hclog.Info, Output: &buf})
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "noisy"), Logger: logger})
	defer h.Close()
	if _, err := h.Open(ctxT(t), "noisy"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a plugin log line under the plugin's name", time.Minute, func() error { // the line comes on its own time
		if out := buf.String(); !strings.Contains(out, "runner.flowstate-plugin-noisy: noise") {
			return fmt.Errorf("not in:\n%.2000s", out)
		}
		return nil
	})
}

// inProcess is the builtin of TestBuiltinsInProcess, in the host's own process: a state
// backend and checkpoint storage that creates keyed backends (which it never uses) and
// nothing else.
type inProcess struct{}

func (inProcess) PluginInfo() sdk.PluginInfo                   { return sdk.PluginInfo{Name: "mem", Version: "0.1.0"} }
func (inProcess) Configure(context.Context, sdk.Options) error { return nil }
func (inProcess) CreateKeyedStateBackend(context.Context, sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	return struct{ sdk.KeyedStateBackend }{}, nil
}
func (inProcess) ResolveCheckpoint(context.Context, string) (sdk.CompletedCheckpointStorageLocation, error) {
	return sdk.CompletedCheckpointStorageLocation{}, sdk.ErrUnsupported
}
func (inProcess) CreateCheckpointStorage(context.Context, string) (sdk.CheckpointStorageAccess, error) {
	return nil, sdk.ErrUnsupported
}

// TestConcurrentOpens: Opens of one plugin at once start one process and all get its
// instance; plugins of different names start side by side. A Close while they start
// leaves no process running: every start it overtook kills what it started.
func TestConcurrentOpens(t *testing.T) {
	h := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem", "memstorage")})
	defer h.Close()
	ctx := ctxT(t)
	const n = 4
	got := make([]*pluginhost.Instance, 2*n)
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		name := []string{"mem", "memstorage"}[i%2]
		wg.Go(func() { got[i], errs[i] = h.Open(ctx, name) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i] != got[i%2] {
			t.Fatalf("Open %d of %s got instance %p (pid %d), want %p (pid %d)", i, got[i].Name(), got[i], got[i].Pid(), got[i%2], got[i%2].Pid())
		}
	}
	if got[0].Pid() == got[1].Pid() || !got[0].Alive() || !got[1].Alive() {
		t.Fatalf("mem pid %d alive %v, memstorage pid %d alive %v", got[0].Pid(), got[0].Alive(), got[1].Pid(), got[1].Alive())
	}

	// A Close racing starts: whatever an Open returns must not outlive it.
	h2 := pluginhost.New(pluginhost.Options{Dir: pluginDir(t, "mem", "memstorage")})
	opened := make(chan *pluginhost.Instance, 2)
	for _, name := range []string{"mem", "memstorage"} {
		wg.Go(func() {
			if in, err := h2.Open(ctx, name); err == nil {
				opened <- in
			}
		})
	}
	h2.Close()
	wg.Wait()
	close(opened)
	for in := range opened {
		if in.Alive() {
			t.Errorf("%s (pid %d) runs after Close", in.Name(), in.Pid())
		}
	}
}

// TestAFailedRestartIsNotAlive: a restart whose start fails leaves the instance not alive,
// so that the next Revive starts it again, instead of an instance that looks alive and
// serves no plugin (a job then failed each attempt with "no state backend is configured").
func TestAFailedRestartIsNotAlive(t *testing.T) {
	dir := pluginDir(t, "mem")
	h := pluginhost.New(pluginhost.Options{Dir: dir})
	defer h.Close()
	ctx := ctxT(t)
	in, err := h.Open(ctx, "mem")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "flowstate-plugin-mem")
	if err := os.Rename(bin, bin+".away"); err != nil {
		t.Fatal(err)
	}
	if err := in.Restart(ctx); err == nil {
		t.Fatal("a restart without the plugin's binary succeeded")
	}
	if in.Alive() {
		t.Fatal("an instance whose restart failed is alive")
	}
	if err := os.Rename(bin+".away", bin); err != nil {
		t.Fatal(err)
	}
	if restarted, err := in.Revive(ctx); err != nil || !restarted || !in.Alive() {
		t.Fatalf("Revive once the binary is back: restarted %v, %v, alive %v", restarted, err, in.Alive())
	}
	if _, ok := in.StateBackend(); !ok {
		t.Fatal("the revived instance serves no state backend")
	}
}

package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testplugins"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/runtime/session"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// testPlugins is the directory of the SDK's test plugins TestMain builds: mem (a state
// backend and a checkpoint storage in one process) and crash (a program that exits at
// once, as a plugin dying on its way up does).
var testPlugins string

func TestMain(m *testing.M) { testplugins.Main(m, &testPlugins, "mem", "crash") }

const job = "sessjob"

// Methods of the plugin protocol, as a host.CallObserver names them.
const (
	callConfigure    = "Info/Configure"
	callCreateAccess = "CheckpointStorage/CreateAccess"
	callNewLocation  = "CheckpointStorage/InitializeCheckpointLocation"
)

// calls counts, by plugin and method, the plugin calls that succeeded, as the host's
// observer reports them.
type calls struct {
	mu sync.Mutex
	n  map[string]int // "plugin method" -> count
}

func (c *calls) of(plugin, method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[plugin+" "+method]
}

// observer is the host.CallObserver of one plugin.
type observer struct {
	c      *calls
	plugin string
}

func (o observer) CallDone(method string, _ time.Duration, err error) {
	if err != nil {
		return
	}
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	o.c.n[o.plugin+" "+method]++
}

func (observer) Message(string, bool) {}

// restarted is what Options.OnRestart was told.
type restarted struct {
	name string
	pid  int
}

// fixture is one run's session over real plugin processes, with a real owner.
type fixture struct {
	cfg      *config.Config
	file     string // the configuration file
	yaml     string // its text
	host     *pluginhost.Host
	owner    *ownership.Owner
	sess     *session.Session
	calls    *calls
	restarts []restarted
	log      *testwait.Buffer
}

// hostOptions says which plugins a fixture's plugin directory holds: built-in binaries (as
// `make build` builds them), the SDK's test plugins, binaries under another plugin's name
// (as[name] = the plugin whose binary it is), and built-ins served in-process.
type hostOptions struct {
	builtins, test []string
	as             map[string]string
	inProcess      []string
}

// newFixture writes yaml (%s replaced by a fresh checkpoint directory) to a configuration
// file, parses and resolves it as the runner does (a plugin that is not built in is asked
// for its kinds by starting it), and returns the session of a run over a fresh plugin
// directory, not yet open.
func newFixture(t *testing.T, yaml string, ho hostOptions) *fixture {
	t.Helper()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(ho.builtins) > 0 {
		testplugins.Link(t, plugins, testbin.PluginDir(t), ho.builtins...)
	}
	testplugins.Link(t, plugins, testPlugins, ho.test...)
	for as, name := range ho.as {
		src := testPlugins
		if !slices.Contains(testplugins.Names, name) {
			src = testbin.PluginDir(t)
		}
		testplugins.LinkAs(t, plugins, src, name, as)
	}
	f := &fixture{calls: &calls{n: map[string]int{}}, log: &testwait.Buffer{}, file: filepath.Join(dir, "flowstate.yaml")}
	f.yaml = strings.ReplaceAll(yaml, "%s", filepath.Join(dir, "checkpoints"))
	if err := os.WriteFile(f.file, []byte(f.yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := pluginhost.Options{Dir: plugins}
	if len(ho.inProcess) > 0 {
		all := builtin.Constructors()
		opts.Builtins, opts.InProcess = map[string]func() sdk.Plugin{}, true
		for _, n := range ho.inProcess {
			opts.Builtins[n] = all[n]
		}
	}
	f.host = pluginhost.New(opts)
	t.Cleanup(f.host.Close)
	f.host.Observe(func(plugin string) host.CallObserver { return observer{f.calls, plugin} })
	ctx := ctxT(t)
	cfg, err := config.Parse([]byte(f.yaml), f.file)
	if err != nil {
		t.Fatal(err)
	}
	kindsOf := func(name string) ([]sdk.Kind, error) {
		in, err := f.host.Open(ctx, name)
		if err != nil {
			return nil, err
		}
		return in.Info().Kinds, nil
	}
	if err := config.Resolve(cfg, kindsOf); err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	owner, _, err := ownership.Own(ctx, ownership.Settings{Job: job, TTL: time.Minute, TimeoutKey: config.KeyLeaseTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := owner.Release(nil); err != nil {
			t.Errorf("releasing the leases: %v", err)
		}
	})
	f.owner = owner
	logger := hclog.New(&hclog.LoggerOptions{Output: f.log, Level: hclog.Warn})
	f.sess = session.New(session.Options{Config: cfg, Host: f.host, Owner: owner, Job: job, Logger: logger,
		OnRestart: func(name string, pid int) { f.restarts = append(f.restarts, restarted{name, pid}) }})
	return f
}

// open opens the session, failing t if it cannot.
func (f *fixture) open(t *testing.T) {
	t.Helper()
	if err := f.sess.Open(ctxT(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
}

// line returns the line of the configuration file that sets key.
func (f *fixture) line(t *testing.T, key string) int {
	t.Helper()
	for i, l := range strings.Split(f.yaml, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	t.Fatalf("the configuration sets no %s:\n%s", key, f.yaml)
	return 0
}

// instance returns the session's instance of plugin name.
func (f *fixture) instance(t *testing.T, name string) *pluginhost.Instance {
	t.Helper()
	for _, in := range f.sess.Plugins() {
		if in.Name() == name {
			return in
		}
	}
	t.Fatalf("the session has no plugin %s", name)
	return nil
}

// newLocation initializes the location of checkpoint id through the session's access,
// and checks that the call went to the storage plugin's process and no other.
func (f *fixture) newLocation(t *testing.T, id int64) sdk.CheckpointStorageLocation {
	t.Helper()
	before := map[string]int{}
	for _, in := range f.sess.Plugins() {
		before[in.Name()] = f.calls.of(in.Name(), callNewLocation)
	}
	loc, err := f.sess.Access().InitializeLocationForCheckpoint(ctxT(t), id)
	if err != nil {
		t.Fatalf("the session's access: checkpoint %d: %v", id, err)
	}
	for _, in := range f.sess.Plugins() {
		want := before[in.Name()]
		if in.Name() == f.cfg.CheckpointStorage {
			want++
		}
		if got := f.calls.of(in.Name(), callNewLocation); got != want {
			t.Errorf("plugin %s served %d location calls, want %d: the access must be the storage's (%s)", in.Name(), got, want, f.cfg.CheckpointStorage)
		}
	}
	return loc
}

// kill sends SIGKILL to the process of in and returns once it has exited.
func kill(t *testing.T, in *pluginhost.Instance) {
	t.Helper()
	pid := in.Pid()
	if pid <= 0 {
		t.Fatalf("plugin %s has no process (pid %d)", in.Name(), pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 plugin %s (pid %d): %v", in.Name(), pid, err)
	}
	exited(t, in)
}

// exited waits for the process of in to exit.
func exited(t *testing.T, in *pluginhost.Instance) {
	t.Helper()
	select {
	case <-in.Done():
	case <-time.After(time.Minute):
		t.Fatalf("plugin %s (pid %d) has not exited within a minute", in.Name(), in.Pid())
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

const (
	fsYAML = `job.name: sessjob
state.backend.type: hashmap
execution.checkpointing.storage: fsstorage
execution.checkpointing.dir: %s
`
	jmYAML = `job.name: sessjob
state.backend.type: hashmap
execution.checkpointing.storage: jmstorage
`
)

var bothBuiltins = hostOptions{builtins: []string{"hashmap", "fsstorage", "jmstorage"}}

// TestOpenStartsAndConfiguresBothPlugins: Open starts the backend and the storage, each
// in a process of its own, configures each once, and creates the job's access of the
// storage: its calls reach the storage's process, and with fsstorage the run's owner took
// the job's lease through it (the lease record is in the job's directory).
func TestOpenStartsAndConfiguresBothPlugins(t *testing.T) {
	for _, c := range []struct{ name, yaml, storage string }{
		{"hashmap+fsstorage", fsYAML, "fsstorage"},
		{"hashmap+jmstorage", jmYAML, "jmstorage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.yaml, bothBuiltins)
			f.open(t)
			ps := f.sess.Plugins()
			if len(ps) != 2 || ps[0].Name() != "hashmap" || ps[1].Name() != c.storage {
				t.Fatalf("Plugins() = %v; want hashmap, then %s", names(ps), c.storage)
			}
			if ps[0].Pid() <= 0 || ps[1].Pid() <= 0 || ps[0].Pid() == ps[1].Pid() || !ps[0].Alive() || !ps[1].Alive() {
				t.Errorf("pids %d and %d, alive %v and %v; want two running processes", ps[0].Pid(), ps[1].Pid(), ps[0].Alive(), ps[1].Alive())
			}
			for _, n := range []string{"hashmap", c.storage} {
				if got := f.calls.of(n, callConfigure); got != 1 {
					t.Errorf("plugin %s configured %d times, want once", n, got)
				}
			}
			if f.sess.Backend() == nil || f.sess.Storage() == nil || f.sess.Access() == nil {
				t.Fatalf("Backend %v, Storage %v, Access %v; want all three", f.sess.Backend(), f.sess.Storage(), f.sess.Access())
			}
			if got := f.calls.of(c.storage, callCreateAccess); got != 1 {
				t.Errorf("storage %s created %d accesses, want 1", c.storage, got)
			}
			if f.sess.StorageName() != c.storage {
				t.Errorf("StorageName() = %q, want %q", f.sess.StorageName(), c.storage)
			}
			loc := f.newLocation(t, 1)
			if err := f.owner.Check(); err != nil {
				t.Errorf("the owner's fence after Open: %v", err)
			}
			if c.storage != "fsstorage" {
				return
			}
			jobDir := filepath.Join(f.cfg.Checkpointing.Dir, job)
			if _, err := os.Stat(filepath.Join(jobDir, "_lease")); err != nil {
				t.Errorf("the job's lease record in its storage: %v", err)
			}
			if st, err := os.Stat(filepath.Join(jobDir, "chk-1")); err != nil || !st.IsDir() {
				t.Errorf("checkpoint 1's location %s: not a directory under %s: %v", loc.LocationReference(), jobDir, err)
			}
		})
	}
}

// TestOnePluginServesBothRoles: a state backend that is also the job's checkpoint storage
// (mem, which the configuration selects as both) runs as one process, listed once, and is
// configured once; the access is of that process.
func TestOnePluginServesBothRoles(t *testing.T) {
	f := newFixture(t, "job.name: sessjob\nstate.backend.type: mem\n", hostOptions{test: []string{"mem"}})
	if !f.cfg.StorageFromBackend || f.cfg.CheckpointStorage != "mem" {
		t.Fatalf("the configuration's storage is %q (from the backend: %v); want mem", f.cfg.CheckpointStorage, f.cfg.StorageFromBackend)
	}
	f.open(t)
	if ps := f.sess.Plugins(); len(ps) != 1 || ps[0].Name() != "mem" {
		t.Fatalf("Plugins() = %v; want mem alone", names(ps))
	}
	if got := f.calls.of("mem", callConfigure); got != 1 {
		t.Errorf("mem configured %d times, want once", got)
	}
	if f.sess.Backend() == nil || f.sess.Storage() == nil || f.sess.Access() == nil {
		t.Fatal("the session lacks its backend, storage or access")
	}
	f.newLocation(t, 1)
	in := f.instance(t, "mem")
	oldPid := in.Pid()
	kill(t, in)
	renewed, err := f.sess.Ensure(ctxT(t))
	if err != nil || !renewed {
		t.Fatalf("Ensure after mem died: renewed %v, %v; want a new access", renewed, err)
	}
	if got := f.calls.of("mem", callConfigure); got != 2 {
		t.Errorf("mem configured %d times after one restart, want twice: once per process", got)
	}
	f.checkRestarted(t, in, oldPid, 1)
	f.newLocation(t, 2)
}

// TestOpenRefusesWhatCannotBe: a plugin that cannot be what the configuration asks (no
// such binary; a binary serving the other kind) is a permanent error naming the key that
// chose it; a plugin that exits on its way up is not permanent, since another start may
// work.
func TestOpenRefusesWhatCannotBe(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		ho         hostOptions
		permanent  bool
		want       []string
	}{
		{"no storage binary", fsYAML, hostOptions{builtins: []string{"hashmap"}}, true,
			[]string{`checkpoint storage "fsstorage" (execution.checkpointing.storage)`, "unknown plugin", "flowstate-plugin-fsstorage"}},
		{"no backend binary", fsYAML, hostOptions{builtins: []string{"fsstorage"}}, true,
			[]string{`state backend "hashmap" (state.backend.type)`, "unknown plugin", "flowstate-plugin-hashmap"}},
		{"a backend as the storage", jmYAML, hostOptions{builtins: []string{"hashmap"}, as: map[string]string{"jmstorage": "hashmap"}}, true,
			[]string{`execution.checkpointing.storage: plugin "jmstorage" is not a checkpoint storage`}},
		{"a storage as the backend", jmYAML, hostOptions{builtins: []string{"jmstorage"}, as: map[string]string{"hashmap": "jmstorage"}}, true,
			[]string{`state.backend.type: plugin "hashmap" is not a state backend`}},
		{"a backend exiting on its way up", jmYAML, hostOptions{builtins: []string{"jmstorage"}, as: map[string]string{"hashmap": "crash"}}, false,
			[]string{`state backend "hashmap" (state.backend.type)`, host.ErrExited.Error()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.yaml, c.ho)
			err := f.sess.Open(ctxT(t))
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if restart.IsPermanent(err) != c.permanent {
				t.Errorf("Open: permanent %v, want %v: %v", restart.IsPermanent(err), c.permanent, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open: %v\nwant it to say %q", err, w)
				}
			}
		})
	}
}

// TestEnsureBringsBackWhatDied: with nothing dead Ensure does nothing. After the backend
// is killed (kill -9) it starts it again, configures the new process (and only it), tells
// OnRestart its new pid, and keeps the access (renewed false). After the storage is killed
// it does the same for the storage and creates a new access of the new process (renewed
// true): the old access fails, the new one works, and the owner's lease carries on.
func TestEnsureBringsBackWhatDied(t *testing.T) {
	f := newFixture(t, fsYAML, bothBuiltins)
	f.open(t)
	ctx := ctxT(t)
	if renewed, err := f.sess.Ensure(ctx); err != nil || renewed || len(f.restarts) != 0 || f.calls.of("hashmap", callConfigure) != 1 {
		t.Fatalf("Ensure with nothing dead: renewed %v, %v, restarts %v, hashmap configured %d times; want nothing done",
			renewed, err, f.restarts, f.calls.of("hashmap", callConfigure))
	}

	backend := f.instance(t, "hashmap")
	oldPid := backend.Pid()
	kill(t, backend)
	renewed, err := f.sess.Ensure(ctx)
	if err != nil || renewed {
		t.Fatalf("Ensure after the backend died: renewed %v, %v; want the access kept", renewed, err)
	}
	f.checkRestarted(t, backend, oldPid, 1)
	f.checkConfigured(t, 2, 1) // only the new process takes its options again
	if got := f.calls.of("fsstorage", callCreateAccess); got != 1 {
		t.Errorf("fsstorage created %d accesses, want 1: the backend's death leaves the access alone", got)
	}
	f.newLocation(t, 1)

	storage := f.instance(t, "fsstorage")
	oldAccess, oldPid := f.sess.Access(), storage.Pid()
	kill(t, storage)
	if renewed, err = f.sess.Ensure(ctx); err != nil || !renewed {
		t.Fatalf("Ensure after the storage died: renewed %v, %v; want a new access", renewed, err)
	}
	f.checkRestarted(t, storage, oldPid, 2)
	f.checkConfigured(t, 2, 2)
	if got := f.calls.of("fsstorage", callCreateAccess); got != 2 {
		t.Errorf("fsstorage created %d accesses, want 2", got)
	}
	if _, err := oldAccess.InitializeLocationForCheckpoint(ctx, 2); err == nil {
		t.Error("the access of the killed storage process still works; want it to fail")
	}
	f.newLocation(t, 2)
	if err := f.owner.Check(); err != nil {
		t.Errorf("the owner's fence after the storage restarted: %v", err)
	}
	if renewed, err := f.sess.Ensure(ctx); err != nil || renewed || len(f.restarts) != 2 {
		t.Errorf("Ensure once more: renewed %v, %v, restarts %v; want nothing done", renewed, err, f.restarts)
	}
}

// checkRestarted checks that Ensure brought in back as the session's n-th restart: a
// second process (generation 2) with a pid other than oldPid, of which OnRestart was told.
func (f *fixture) checkRestarted(t *testing.T, in *pluginhost.Instance, oldPid, n int) {
	t.Helper()
	if !in.Alive() || in.Pid() == oldPid || in.Generation() != 2 {
		t.Errorf("%s after Ensure: alive %v, pid %d (was %d), generation %d; want a second process", in.Name(), in.Alive(), in.Pid(), oldPid, in.Generation())
	}
	if len(f.restarts) != n || f.restarts[n-1] != (restarted{in.Name(), in.Pid()}) {
		t.Errorf("OnRestart told %v; want %d restarts, the last of %s with its new pid %d", f.restarts, n, in.Name(), in.Pid())
	}
}

// checkConfigured checks how many times hashmap and fsstorage were configured.
func (f *fixture) checkConfigured(t *testing.T, hashmap, fsstorage int) {
	t.Helper()
	if h, s := f.calls.of("hashmap", callConfigure), f.calls.of("fsstorage", callConfigure); h != hashmap || s != fsstorage {
		t.Errorf("configured hashmap %d and fsstorage %d times; want %d and %d", h, s, hashmap, fsstorage)
	}
}

// TestWatchCancelsWhenAPluginExits: a plugin process that exits cancels the attempt's
// context with a cause naming the plugin; stop ends the watching at once: its goroutines
// are gone when it returns, and a process that exits afterwards cancels nothing.
func TestWatchCancelsWhenAPluginExits(t *testing.T) {
	f := newFixture(t, fsYAML, bothBuiltins)
	f.open(t)
	for _, victim := range []string{"hashmap", "fsstorage"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := f.sess.Watch(ctx, cancel)
		testwait.For(t, "a goroutine watching each of the 2 plugins", time.Minute, func() error {
			if n := watchers(t); n != 2 {
				return fmt.Errorf("%d watching", n)
			}
			return nil
		})
		kill(t, f.instance(t, victim))
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Fatalf("killing %s did not cancel the attempt within a minute", victim)
		}
		if cause := context.Cause(ctx); cause == nil || !strings.Contains(cause.Error(), "plugin "+victim+" exited") {
			t.Errorf("the attempt's cause: %v; want it to name plugin %s", cause, victim)
		}
		stop()
		if n := watchers(t); n != 0 {
			t.Errorf("%d watching goroutines left after stop", n)
		}
		if _, err := f.sess.Ensure(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}

	// Stopped before a process exits: nothing is cancelled, and nothing is left watching.
	var stopped, late atomic.Bool
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := f.sess.Watch(ctx, func(err error) {
		if stopped.Load() {
			late.Store(true)
		}
		cancel(err)
	})
	stop()
	stopped.Store(true)
	if n := watchers(t); n != 0 {
		t.Errorf("%d watching goroutines left after stop", n)
	}
	kill(t, f.instance(t, "hashmap"))
	if late.Load() || ctx.Err() != nil {
		t.Errorf("a plugin exiting after stop cancelled the attempt: %v", context.Cause(ctx))
	}

	// The attempt's context ending ends the watching too.
	if _, err := f.sess.Ensure(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	stop = f.sess.Watch(ctx2, cancel2)
	cancel2(errors.New("the attempt ended"))
	testwait.For(t, "the watching to end with the attempt's context", time.Minute, func() error {
		if n := watchers(t); n != 0 {
			return fmt.Errorf("%d watching goroutines", n)
		}
		return nil
	})
	stop()
}

// watchers counts the goroutines Session.Watch started that are still there, those not
// yet running included.
func watchers(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return strings.Count(b.String(), "created by github.com/flowstate/flowstate/runtime/session.(*Session).Watch in goroutine")
}

// TestKillStuck: the first cancellation timeout kills the backend's process, the second
// the storage's, a third nothing; each kill is logged with the plugin and its pid.
func TestKillStuck(t *testing.T) {
	f := newFixture(t, fsYAML, bothBuiltins)
	f.open(t)
	backend, storage := f.instance(t, "hashmap"), f.instance(t, "fsstorage")
	const d = 5 * time.Second

	f.sess.KillStuck(3, d)
	if !backend.Alive() || !storage.Alive() {
		t.Fatalf("after the third timeout: backend alive %v, storage alive %v; want both untouched", backend.Alive(), storage.Alive())
	}
	pid := backend.Pid()
	f.sess.KillStuck(1, d)
	if backend.Alive() || !storage.Alive() {
		t.Fatalf("after the first timeout: backend alive %v, storage alive %v; want the backend killed", backend.Alive(), storage.Alive())
	}
	if log := f.log.String(); !strings.Contains(log, "plugin=hashmap") || !strings.Contains(log, fmt.Sprintf("pid=%d", pid)) || !strings.Contains(log, "5s after it was cancelled") {
		t.Errorf("the log of the kill does not name hashmap, pid %d and 5s:\n%s", pid, log)
	}
	if _, err := f.sess.Ensure(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	f.sess.KillStuck(2, d)
	if !backend.Alive() || storage.Alive() {
		t.Fatalf("after the second timeout: backend alive %v, storage alive %v; want the storage killed", backend.Alive(), storage.Alive())
	}
	if !strings.Contains(f.log.String(), "10s after it was cancelled") {
		t.Errorf("the log of the second kill does not say 10s:\n%s", f.log.String())
	}
}

// TestKillStuckSparesAnInProcessPlugin: a backend served in the runner's process cannot be
// killed: the first timeout leaves it running; the storage's process is killed as ever.
func TestKillStuckSparesAnInProcessPlugin(t *testing.T) {
	f := newFixture(t, fsYAML, hostOptions{builtins: []string{"fsstorage"}, inProcess: []string{"hashmap"}})
	f.open(t)
	backend, storage := f.instance(t, "hashmap"), f.instance(t, "fsstorage")
	if backend.Pid() != 0 || storage.Pid() <= 0 {
		t.Fatalf("backend pid %d, storage pid %d; want the backend in-process and the storage a process", backend.Pid(), storage.Pid())
	}
	f.sess.KillStuck(1, time.Second)
	if !backend.Alive() {
		t.Error("the first timeout killed the in-process backend")
	}
	f.sess.KillStuck(2, time.Second)
	if !backend.Alive() || storage.Alive() {
		t.Errorf("after the second timeout: backend alive %v, storage alive %v; want the storage killed", backend.Alive(), storage.Alive())
	}
}

// TestRefusedOptionNamesWhereItWasSet: an option a plugin refuses (fsstorage's
// write-buffer-size of 0; an option mem does not know) is a permanent error that starts
// with the file, line and key that set it.
func TestRefusedOptionNamesWhereItWasSet(t *testing.T) {
	for _, c := range []struct {
		name, yaml, key       string
		plugin, option, value string
		ho                    hostOptions
	}{
		{"storage", fsYAML + "execution.checkpointing.fsstorage.write-buffer-size: 0\n", "execution.checkpointing.fsstorage.write-buffer-size",
			"fsstorage", "write-buffer-size", "0", bothBuiltins},
		{"backend", "job.name: sessjob\nstate.backend.type: mem\nstate.backend.mem.colour: red\n", "state.backend.mem.colour",
			"mem", "colour", "red", hostOptions{test: []string{"mem"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.yaml, c.ho)
			err := f.sess.Open(ctxT(t))
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if !restart.IsPermanent(err) {
				t.Errorf("Open: %v; want a permanent error", err)
			}
			where := fmt.Sprintf("%s:%d: %s: plugin %s refused option %q (value %q)", f.file, f.line(t, c.key), c.key, c.plugin, c.option, c.value)
			if !strings.HasPrefix(err.Error(), where) {
				t.Errorf("Open: %v\nwant it to start with %q", err, where)
			}
		})
	}
}

func names(ps []*pluginhost.Instance) []string {
	var ns []string
	for _, p := range ps {
		ns = append(ns, p.Name())
	}
	return ns
}

// Package pluginhost is the runner's view of its plugins: it finds the binaries named
// flowstate-plugin-NAME in the plugin directory, checks them, starts one process per name
// and restarts it on demand. Built-in plugins can run in the runner's process instead,
// through the same sdk interfaces.
//
// It reaches plugins only as processes, through the SDK's host end (sdk/host), or through
// the constructors its caller hands it (Options.Builtins): it must never import a plugin
// (nothing under plugins/, not even plugins/builtin), nor anything of the runtime (not the
// configuration, the engine or the runner, which drives it).
package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
)

// Prefix starts the file name of every plugin binary: flowstate-plugin-NAME.
const Prefix = "flowstate-plugin-"

// Options configure a Host.
type Options struct {
	// Dir is the plugin directory.
	Dir string
	// Checksums pins plugin binaries by name to their hex SHA-256.
	Checksums map[string]string
	// PinnedIn says, by plugin name, where a checksum was pinned (a lock file, a config
	// key), for error messages.
	PinnedIn map[string]string
	// Logger receives the host's and the plugins' log lines; nil means a logger that
	// discards them.
	Logger hclog.Logger
	// Builtins are plugins that can run in the runner's process, by name, when InProcess
	// is set (plugins/builtin.Constructors has the built-ins).
	Builtins map[string]func() sdk.Plugin
	// InProcess runs a plugin from Builtins, when there is one by that name, instead of
	// its binary. Without it Builtins are not used: every plugin is a process of its
	// binary, and a missing binary is an error, never made up for in-process (a benchmark
	// of plugin processes must not measure an in-process built-in instead).
	InProcess bool
	// LockFile, when set, is the lock file in force (its path, for messages): a plugin
	// binary without a pin in Checksums is then refused, never started.
	LockFile string
	// AllowOutsideDir names the plugins whose symlink may lead out of Dir
	// (plugins.allow-outside-dir).
	AllowOutsideDir []string
	// HeartbeatInterval and HeartbeatTimeout (heartbeat.interval, heartbeat.timeout): while
	// an instance's process runs, the host pings it every interval and kills it when no
	// answer came for timeout. A zero interval or timeout sends no heartbeats.
	HeartbeatInterval, HeartbeatTimeout time.Duration
}

// Host starts and keeps the runner's plugin processes.
type Host struct {
	opts   Options
	logger hclog.Logger

	mu        sync.Mutex
	instances map[string]*Instance
	// starting holds, by name, the plugins whose first start is under way: closed when it
	// ended, with the instance in instances or the start failed.
	starting  map[string]chan struct{}
	closed    bool
	observers observers // see Observe
}

// New returns a Host; it starts nothing until Open.
func New(opts Options) *Host {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Host{opts: opts, logger: logger, instances: map[string]*Instance{}, starting: map[string]chan struct{}{}}
}

// ErrUnknownPlugin: no plugin by that name in the plugin directory (nor a builtin).
var ErrUnknownPlugin = errors.New("unknown plugin")

// Open returns the running instance of plugin name, starting it the first time. Later
// calls return the same instance, even if its process has exited since (see
// Instance.Alive and Instance.Restart). Plugins of different names start side by side;
// a call for a plugin whose start is under way waits for it.
func (h *Host) Open(ctx context.Context, name string) (*Instance, error) {
	h.mu.Lock()
	for {
		if h.closed {
			h.mu.Unlock()
			return nil, fmt.Errorf("plugin %s: the plugin host is closed", name)
		}
		if in, ok := h.instances[name]; ok {
			h.mu.Unlock()
			return in, nil
		}
		started, busy := h.starting[name]
		if !busy {
			break
		}
		h.mu.Unlock()
		select {
		case <-started: // running now, or its start failed: look again
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		h.mu.Lock()
	}
	started := make(chan struct{})
	h.starting[name] = started
	h.mu.Unlock()
	defer close(started)
	in, err := h.newInstance(name)
	if err == nil {
		err = in.start(ctx)
	}
	h.mu.Lock()
	delete(h.starting, name)
	closed := h.closed
	if err == nil && !closed {
		h.instances[name] = in
	}
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if closed { // Close came while it started: it waits for this
		in.Kill()
		return nil, fmt.Errorf("plugin %s: the plugin host is closed", name)
	}
	return in, nil
}

// startsUnderWay returns the channels of the starts under way; the caller holds h.mu.
func (h *Host) startsUnderWay() []chan struct{} { return slices.Collect(maps.Values(h.starting)) }

func (h *Host) newInstance(name string) (*Instance, error) {
	if err := (sdk.PluginInfo{Name: name}).CheckName(); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnknownPlugin)
	}
	if f, ok := h.opts.Builtins[name]; ok && h.opts.InProcess {
		return &Instance{name: name, builtin: f, logger: h.logger}, nil
	}
	path := filepath.Join(h.opts.Dir, Prefix+name)
	if _, err := os.Lstat(path); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		return nil, h.unknown(name)
	}
	if err := h.pinned(name); err != nil {
		return nil, err
	}
	resolved, err := h.resolve(name, path)
	if err != nil {
		return nil, err
	}
	return &Instance{name: name, path: resolved, sha256: h.opts.Checksums[name], pinnedIn: h.opts.PinnedIn[name],
		logger: h.logger, heartbeat: heartbeat{every: h.opts.HeartbeatInterval, timeout: h.opts.HeartbeatTimeout},
		observer: forwarder{h, name}}, nil
}

// pinned refuses plugin name when a lock file is in force and pins no checksum for it.
func (h *Host) pinned(name string) error {
	if h.opts.LockFile == "" || h.opts.Checksums[name] != "" {
		return nil
	}
	return fmt.Errorf("plugin %s: %w in %s: refusing to run it; if it is intended, pin it with `runner plugins lock`", name, ErrUnpinned, h.opts.LockFile)
}

// unknown explains that plugin name does not exist, listing the names that do.
func (h *Host) unknown(name string) error {
	names, err := h.names()
	if err != nil {
		return fmt.Errorf("plugin %s: %w: %w", name, ErrUnknownPlugin, err)
	}
	if h.opts.InProcess {
		for b := range h.opts.Builtins {
			names = append(names, b+" (built in)")
		}
	}
	sort.Strings(names)
	found := "none"
	if len(names) > 0 {
		found = strings.Join(names, ", ")
	}
	return fmt.Errorf("plugin %s: %w: no file %s in %s (found: %s)", name, ErrUnknownPlugin, Prefix+name, h.opts.Dir, found)
}

// names returns the names of the plugin binaries in the plugin directory.
func (h *Host) names() ([]string, error) {
	entries, err := os.ReadDir(h.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("plugin directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), Prefix); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	return names, nil
}

// Close kills every plugin process (each gets host.KillGrace to exit, all at once); the
// host opens nothing afterwards.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	instances := h.instances
	h.instances = map[string]*Instance{}
	starts := h.startsUnderWay()
	h.mu.Unlock()
	eachInstance(instances, (*Instance).Kill)
	for _, c := range starts { // each kills what it started (see Open)
		<-c
	}
}

// KillNow sends SIGKILL to every running plugin process at once and returns once they are
// gone, naming them ("hashmap (pid 123)"): for a runner that must end while its plugins
// hold it up. The host stays open.
func (h *Host) KillNow() []string {
	h.mu.Lock()
	starts := h.startsUnderWay()
	h.mu.Unlock()
	for _, c := range starts { // a start under way ends first, as its process may be up
		<-c
	}
	h.mu.Lock()
	instances := maps.Clone(h.instances)
	h.mu.Unlock()
	var mu sync.Mutex
	var killed []string
	eachInstance(instances, func(in *Instance) {
		if pid := in.killNow("the runner is ending"); pid > 0 {
			mu.Lock()
			killed = append(killed, fmt.Sprintf("%s (pid %d)", in.Name(), pid))
			mu.Unlock()
		}
	})
	sort.Strings(killed)
	return killed
}

// eachInstance calls f on every instance concurrently and waits for all.
func eachInstance(instances map[string]*Instance, f func(*Instance)) {
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(in)
		}()
	}
	wg.Wait()
}

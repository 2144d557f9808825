// Package host is the host's side of the SDK: it starts Flowstate plugin binaries and hands
// out what they serve as the very same sdk interfaces (sdk.StateBackend,
// sdk.CheckpointStorage), backed by gRPC clients; it gives keyed backends in the host's own
// process the scheduling the SDK gives those in a plugin process (LocalPipeline); and it
// has what a host does with state streams (checksums, verification). The runner and tests
// use it; plugins do not, and a plugin binary does not link it.
//
// It must never import the plugin end (sdk/server), nor anything outside the SDK module;
// internal/deps checks both.
package host

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/client"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// ProtocolVersion is the version of the plugin protocol this SDK speaks: what a plugin
// served by server.Serve offers, and what a host speaks when Config.Protocols is nil. Hosts
// keep speaking earlier versions alongside newer ones (docs/plugin-authors.md, section 10).
const ProtocolVersion = wire.ProtocolVersion

// DefaultStartTimeout bounds a plugin's start-up when Config.StartTimeout is zero.
const DefaultStartTimeout = 10 * time.Second

// Config says which plugin binary to start and how.
type Config struct {
	// Path is the plugin binary.
	Path string
	// SHA256 is the binary's expected SHA-256 in hex; empty skips the check.
	SHA256 string
	// Logger receives the plugin's log lines under the binary's name; nil means
	// hclog.Default().
	Logger hclog.Logger
	// StartTimeout bounds the start-up handshake; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// Protocols are the protocol versions the host speaks; nil means
	// {ProtocolVersion}. The highest version both sides speak is used.
	Protocols []int
	// Observer, when set, sees every call of the plugin protocol the host makes to the
	// plugin, and every message of those calls (see CallObserver).
	Observer CallObserver
}

// Info describes a started plugin.
type Info struct {
	// Name and Version are what the plugin reports.
	Name, Version string
	// Kinds are the kinds the plugin serves, state backend first.
	Kinds []sdk.Kind
	// Protocol is the negotiated protocol version.
	Protocol int
	// Path is the binary's absolute path.
	Path string
}

// Plugin is a running plugin process.
type Plugin struct {
	info   Info
	client *plugin.Client
	cmd    *exec.Cmd
	proto  plugin.ClientProtocol
	remote *client.Remote
	stderr *tail
	killMu sync.Mutex
}

// Start starts the plugin binary cfg.Path, completes the handshake and asks the plugin
// what it is. The checks (an executable regular file, the SHA-256 pin) read the very file
// that is executed. Every error names the file. The caller must Kill the plugin when done.
func Start(ctx context.Context, cfg Config) (*Plugin, error) {
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", cfg.Path, err)
	}
	bin, err := openBinary(path, cfg.SHA256)
	if err != nil {
		return nil, err
	}
	defer bin.close() // the child has its own descriptor once started
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.Default()
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	protocols := slices.Clone(cfg.Protocols)
	if len(protocols) == 0 {
		protocols = []int{ProtocolVersion}
	}
	slices.Sort(protocols)
	versioned := make(map[int]plugin.PluginSet, len(protocols))
	for _, v := range protocols {
		versioned[v] = plugin.PluginSet{wire.PluginName: client.Plugin{}}
	}

	cmd := bin.command()
	cmd.Env = []string{wire.LogLevelEnv + "=" + levelName(logger)}
	cmd.SysProcAttr = sysProcAttr()
	named := logger.Named(filepath.Base(path))
	p := &Plugin{cmd: cmd, stderr: newTail(stderrTailLines)}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake(ProtocolVersion),
		VersionedPlugins: versioned,
		GRPCDialOptions:  append(observe(cfg.Observer), wire.DialWindows()...),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		Stderr:           p.stderr,
		SyncStdout:       newLineLogger(named, hclog.Info),
		SyncStderr:       newLineLogger(named, hclog.Warn),
		Logger:           pluginNamed{Logger: logger, path: path, exec: cmd.Path},
	})
	if err := p.handshake(ctx, path, timeout, protocols); err != nil {
		p.KillNow()
		return nil, err
	}
	return p, nil
}

// handshake connects to the started plugin and asks it what it is.
func (p *Plugin) handshake(ctx context.Context, path string, timeout time.Duration, protocols []int) error {
	proto, err := connect(ctx, p)
	if err != nil {
		p.KillNow() // its exit status and last stderr lines complete the error
		return p.startError(path, protocols, err)
	}
	raw, err := proto.Dispense(wire.PluginName)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", path, err)
	}
	r, ok := raw.(*client.Remote)
	if !ok {
		return fmt.Errorf("plugin %s: unexpected client type %T", path, raw)
	}
	p.proto, p.remote = proto, r
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, kinds, _, err := r.Describe(dctx)
	if err != nil {
		return fmt.Errorf("plugin %s: describing itself: %w", path, err)
	}
	if len(kinds) == 0 {
		return fmt.Errorf("plugin %s (%s) serves no kind", path, info.Name)
	}
	p.info = Info{Name: info.Name, Version: info.Version, Kinds: kinds, Protocol: p.client.NegotiatedVersion(), Path: path}
	return nil
}

// connect completes go-plugin's start-up, or gives up (killing the process) when ctx
// ends.
func connect(ctx context.Context, p *Plugin) (plugin.ClientProtocol, error) {
	type result struct {
		cp  plugin.ClientProtocol
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cp, err := p.client.Client()
		ch <- result{cp, err}
	}()
	select {
	case r := <-ch:
		return r.cp, r.err
	case <-ctx.Done():
		p.KillNow()
		<-ch
		return nil, ctx.Err()
	}
}

// Info describes the plugin.
func (p *Plugin) Info() Info {
	i := p.info
	i.Kinds = slices.Clone(i.Kinds)
	return i
}

// Configure passes the plugin its options (sdk.Plugin.Configure).
func (p *Plugin) Configure(ctx context.Context, opts sdk.Options) error {
	if err := p.remote.Configure(ctx, opts); err != nil {
		return fmt.Errorf("configuring plugin %s: %w", p.info.Name, err)
	}
	return nil
}

// StateBackend returns the plugin's state backend, if it serves one.
func (p *Plugin) StateBackend() (sdk.StateBackend, bool) {
	if !slices.Contains(p.info.Kinds, sdk.KindStateBackend) {
		return nil, false
	}
	return p.remote.StateBackend(sdk.PluginInfo{Name: p.info.Name, Version: p.info.Version}), true
}

// CheckpointStorage returns the plugin's checkpoint storage, if it serves one.
func (p *Plugin) CheckpointStorage() (sdk.CheckpointStorage, bool) {
	if !slices.Contains(p.info.Kinds, sdk.KindCheckpointStorage) {
		return nil, false
	}
	return p.remote.CheckpointStorage(sdk.PluginInfo{Name: p.info.Name, Version: p.info.Version}), true
}

// Done is closed when the plugin process has exited.
func (p *Plugin) Done() <-chan struct{} { return p.remote.Done() }

// Exited reports whether the plugin process has exited.
func (p *Plugin) Exited() bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// Pid returns the plugin's process id.
func (p *Plugin) Pid() int { return p.cmd.Process.Pid }

// ExitError says how the plugin process ended (exit status and its last stderr lines);
// nil while it runs.
func (p *Plugin) ExitError() error {
	if !p.Exited() {
		return nil
	}
	return fmt.Errorf("plugin %s (pid %d) exited: %s%s", p.info.Path, p.Pid(), exitState(p.cmd), p.stderr.format())
}

func exitState(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "unknown status"
	}
	return cmd.ProcessState.String()
}

// pluginNamed is the host's logger as go-plugin gets it. go-plugin names a plugin by the
// path it executes: under Named(its base name) for the plugin's lines, in a "plugin" or
// "path" argument of its own lines. When the binary runs from its open file that path is a
// descriptor's; pluginNamed puts the binary's path (and base name) in its place.
type pluginNamed struct {
	hclog.Logger
	path, exec string
}

// Named returns the host's logger named after the plugin binary, whatever name is asked.
func (l pluginNamed) Named(string) hclog.Logger { return l.Logger.Named(filepath.Base(l.path)) }

func (l pluginNamed) args(args []any) []any {
	out := slices.Clone(args)
	for i, a := range out {
		if s, ok := a.(string); ok && s == l.exec {
			out[i] = l.path
		}
	}
	return out
}

// Log and the level methods log with the binary's path in place of the executed one.
func (l pluginNamed) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(level, msg, l.args(args)...)
}
func (l pluginNamed) Trace(msg string, args ...any) { l.Logger.Trace(msg, l.args(args)...) }
func (l pluginNamed) Debug(msg string, args ...any) { l.Logger.Debug(msg, l.args(args)...) }
func (l pluginNamed) Info(msg string, args ...any)  { l.Logger.Info(msg, l.args(args)...) }
func (l pluginNamed) Warn(msg string, args ...any)  { l.Logger.Warn(msg, l.args(args)...) }
func (l pluginNamed) Error(msg string, args ...any) { l.Logger.Error(msg, l.args(args)...) }

func levelName(l hclog.Logger) string {
	lv := l.GetLevel()
	if lv == hclog.NoLevel || lv == hclog.Off {
		return "info"
	}
	return strings.ToLower(lv.String())
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/runner"
)

// session is what a command that uses plugins needs: the resolved configuration and a
// plugin host. Close it to stop every plugin process.
type session struct {
	cfg  *config.Config
	host *pluginhost.Host
	log  hclog.Logger
}

func (s *session) Close() { s.host.Close() }

// newLogger returns the runner's logger at the --log-level.
func newLogger(g *globalFlags) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name: "runner", Level: hclog.LevelFromString(g.logLevel), Output: os.Stderr,
	})
}

// pluginStopped is go-plugin's message when a plugin process has ended: at INFO when it
// exited cleanly, at ERROR (with the exit status) when it did not.
const pluginStopped = "plugin process exited"

// newOfflineLogger is newLogger for a command that starts plugins only to read or check
// through them, and stops them at its end: a plugin's clean exit is not news there, and
// is logged only at --log-level debug or trace. A plugin that exited with an error is
// logged all the same.
func newOfflineLogger(g *globalFlags) hclog.Logger {
	level := hclog.LevelFromString(g.logLevel)
	opts := &hclog.LoggerOptions{Name: "runner", Level: level, Output: os.Stderr}
	if level == hclog.NoLevel || level > hclog.Debug {
		opts.Exclude = func(l hclog.Level, msg string, _ ...any) bool { return l == hclog.Info && msg == pluginStopped }
	}
	return hclog.New(opts)
}

// openSession loads and resolves a configuration file for a run, pinning plugins to the
// checksums of the lock file beside it. Deprecations and warnings go to the log.
func openSession(ctx context.Context, g *globalFlags, file string, overrides ...config.Override) (*session, error) {
	return openSessionWith(ctx, newLogger(g), g, file, true, overrides...)
}

// openOfflineSession is openSession for a command that only reads through the plugins
// (newOfflineLogger).
func openOfflineSession(ctx context.Context, g *globalFlags, file string) (*session, error) {
	return openSessionWith(ctx, newOfflineLogger(g), g, file, true)
}

// openSessionWith is openSession logging to log; useLock false ignores the lock file (to
// rewrite it).
func openSessionWith(ctx context.Context, log hclog.Logger, g *globalFlags, file string, useLock bool, overrides ...config.Override) (*session, error) {
	cfg, opts, err := loadConfig(g, file, useLock, log, overrides...)
	if err != nil {
		return nil, err
	}
	host := pluginhost.New(opts)
	if err := config.Resolve(cfg, runner.KindsOf(ctx, host, cfg.Restart, log)); err != nil {
		host.Close()
		return nil, err
	}
	for _, o := range cfg.Overrides {
		log.Info("configuration override: " + o.String())
	}
	for _, d := range cfg.Deprecations {
		log.Warn("deprecated configuration: " + d)
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	return &session{cfg: cfg, host: host, log: log}, nil
}

// loadConfig loads a configuration file (plugin directory applied) and returns the plugin
// host options it implies: the plugin directory, the pins of plugins.checksums and, with
// useLock, of the lock file beside the file, which then also refuses unpinned plugins;
// plugins.allow-outside-dir; the heartbeats. overrides (-D, -p) apply over the file. Every command that starts plugins for a
// configuration goes through here, so that none runs a plugin the lock file does not pin.
func loadConfig(g *globalFlags, file string, useLock bool, log hclog.Logger, overrides ...config.Override) (*config.Config, pluginhost.Options, error) {
	var opts pluginhost.Options
	if file == "" {
		return nil, opts, fmt.Errorf("--config: a configuration file is required")
	}
	cfg, err := config.LoadWith(file, overrides)
	if err != nil {
		return nil, opts, err
	}
	dir := g.pluginDir
	if dir == "" && cfg.Plugins.Dir == "" {
		if dir, err = defaultPluginDir(); err != nil {
			return nil, opts, err
		}
	}
	if err := cfg.Apply(config.Overrides{PluginDir: dir}); err != nil {
		return nil, opts, err
	}
	checksums, pinnedIn := map[string]string{}, map[string]string{}
	for name, sum := range cfg.Plugins.Checksums {
		checksums[name] = sum
		pinnedIn[name] = fmt.Sprintf("%s:%d (plugins.checksums.%s)", cfg.File, cfg.Line("plugins.checksums."+name), name)
	}
	lockFile := ""
	if useLock {
		lockPath := pluginhost.LockPath(file)
		lock, err := pluginhost.ReadLockFile(lockPath)
		if err != nil {
			return nil, opts, err
		}
		for name, p := range lock.Plugins {
			if pin, ok := checksums[name]; ok && !strings.EqualFold(pin, p.SHA256) {
				return nil, opts, fmt.Errorf("plugin %s is pinned twice with different checksums: %s in %s, %s in %s", name, pin, pinnedIn[name], p.SHA256, lockPath)
			}
			checksums[name], pinnedIn[name] = p.SHA256, lockPath
		}
		if _, err := os.Stat(lockPath); err == nil {
			lockFile = lockPath
		}
	}
	return cfg, pluginhost.Options{
		Dir: cfg.Plugins.Dir, Checksums: checksums, PinnedIn: pinnedIn, Logger: log, LockFile: lockFile,
		AllowOutsideDir:   cfg.Plugins.AllowOutsideDir,
		HeartbeatInterval: cfg.Heartbeat.Interval, HeartbeatTimeout: cfg.Heartbeat.Timeout,
	}, nil
}

// signalContext is cancelled by SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

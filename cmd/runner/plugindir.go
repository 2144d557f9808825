package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// defaultPluginDir returns plugins/ beside the runner executable, symlinks resolved: the
// plugin directory when neither --plugin-dir nor plugins.dir says otherwise.
func defaultPluginDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("default plugin directory: locating the runner executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Join(filepath.Dir(exe), "plugins"), nil
}

// pluginDirFor returns --plugin-dir when set, else the default plugin directory.
func pluginDirFor(g *globalFlags) (string, error) {
	if g.pluginDir != "" {
		return g.pluginDir, nil
	}
	return defaultPluginDir()
}

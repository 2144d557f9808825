package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LockFileName is the name of the plugin lock file, kept beside the configuration file,
// as Terraform keeps .terraform.lock.hcl: commit it with the configuration.
const LockFileName = "flowstate.lock"

// LockFile pins plugin binaries to their SHA-256, by plugin name.
type LockFile struct {
	// Plugins are the pinned plugins by name.
	Plugins map[string]LockedPlugin `yaml:"plugins"`
}

// LockedPlugin is one pinned plugin.
type LockedPlugin struct {
	// SHA256 is the hex SHA-256 of the plugin binary.
	SHA256 string `yaml:"sha256"`
	// Version is the version the plugin reported when it was locked (informational).
	Version string `yaml:"version,omitempty"`
	// Kinds are the kinds it reported (informational).
	Kinds []string `yaml:"kinds,omitempty"`
}

// LockPath returns the lock file's path for a configuration file.
func LockPath(configFile string) string {
	return filepath.Join(filepath.Dir(configFile), LockFileName)
}

// ReadLockFile reads a lock file; a missing file gives an empty one.
func ReadLockFile(path string) (*LockFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &LockFile{Plugins: map[string]LockedPlugin{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugin lock file: %w", err)
	}
	var l LockFile
	if err := yaml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("plugin lock file %s: %w", path, err)
	}
	if l.Plugins == nil {
		l.Plugins = map[string]LockedPlugin{}
	}
	for name, p := range l.Plugins {
		if len(p.SHA256) != 64 || strings.Trim(strings.ToLower(p.SHA256), "0123456789abcdef") != "" {
			return nil, fmt.Errorf("plugin lock file %s: plugin %s: sha256 %q is not 64 hex digits", path, name, p.SHA256)
		}
	}
	return &l, nil
}

// Write saves the lock file atomically (temporary file, rename).
func (l *LockFile) Write(path string) error {
	names := make([]string, 0, len(l.Plugins))
	for n := range l.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Plugin checksums pinned by `runner plugins lock`. The runner refuses a plugin binary\n")
	b.WriteString("# whose SHA-256 differs. Commit this file with the configuration beside it.\n")
	b.WriteString("plugins:\n")
	for _, n := range names {
		p := l.Plugins[n]
		fmt.Fprintf(&b, "  %s:\n    sha256: %s\n", n, p.SHA256)
		if p.Version != "" {
			fmt.Fprintf(&b, "    version: %q\n", p.Version)
		}
		if len(p.Kinds) > 0 {
			fmt.Fprintf(&b, "    kinds: [%s]\n", strings.Join(p.Kinds, ", "))
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write plugin lock file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write plugin lock file: %w", err)
	}
	return nil
}

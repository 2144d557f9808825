package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/flowstate/flowstate/sdk/layout"
)

var (
	// ErrInsecure: the plugin binary, or a directory above it or above the plugin
	// directory, is writable by others: they could replace the code the runner executes.
	ErrInsecure = errors.New("insecure plugin file")
	// ErrOutsideDir: a plugin's symlink leads out of the plugin directory, and
	// plugins.allow-outside-dir does not name the plugin.
	ErrOutsideDir = errors.New("symlink leaves the plugin directory")
	// ErrDanglingSymlink: a plugin's symlink leads to nothing.
	ErrDanglingSymlink = errors.New("dangling symlink")
	// ErrUnpinned: a lock file is in force and does not pin the plugin.
	ErrUnpinned = errors.New("plugin not pinned")
)

// maxLinks bounds the symlinks followed from a plugin's entry, as the kernel does.
const maxLinks = 40

// resolve returns the file that the plugin directory's entry path (of plugin name) leads
// to, following its symlinks one by one. It refuses a dangling symlink, a symlink leaving
// the plugin directory (unless Options.AllowOutsideDir names the plugin), and a file or a
// symlink that others could replace: the binary and every directory above it and above
// each symlink of the chain must not be writable by others (a directory with the sticky
// bit, such as /tmp, may be, when the entry under it belongs to the runner's user or
// root). The runner executes the returned path, never the symlink.
func (h *Host) resolve(name, path string) (string, error) {
	dir, err := filepath.EvalSymlinks(h.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("plugin directory: %w", err)
	}
	if err := notWritableByOthers(dir, "plugin directory"); err != nil {
		return "", err
	}
	allowed := slices.Contains(h.opts.AllowOutsideDir, name)
	cur := filepath.Join(dir, filepath.Base(path))
	for links := 0; ; links++ {
		fi, err := os.Lstat(cur)
		if err != nil {
			if links > 0 && errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("plugin %s: %s is a symlink to %s, which does not exist: %w", name, path, cur, ErrDanglingSymlink)
			}
			return "", fmt.Errorf("plugin %s: %w", name, err)
		}
		if !allowed && !layout.Within(dir, cur) {
			return "", fmt.Errorf("plugin %s: %s is a symlink to %s, outside the plugin directory %s: %w; to run it, name the plugin in plugins.allow-outside-dir",
				name, path, cur, dir, ErrOutsideDir)
		}
		if err := notWritableByOthers(filepath.Dir(cur), "plugin "+name+": directory"); err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if err := notWritableByOthers(cur, "plugin "+name+": binary"); err != nil {
				return "", err
			}
			return cur, nil
		}
		if links == maxLinks {
			return "", fmt.Errorf("plugin %s: %s: more than %d symlinks", name, path, maxLinks)
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return "", fmt.Errorf("plugin %s: %w", name, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(cur), target)
		}
		parent, err := filepath.EvalSymlinks(filepath.Dir(target))
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("plugin %s: %s is a symlink to %s, which does not exist: %w", name, path, target, ErrDanglingSymlink)
		}
		if err != nil {
			return "", fmt.Errorf("plugin %s: %w", name, err)
		}
		cur = filepath.Join(parent, filepath.Base(target))
	}
}

// notWritableByOthers refuses path when it, or a directory above it, is writable by
// others. A directory with the sticky bit only lets others add entries, so it passes when
// the entry under it belongs to the runner's user or root.
func notWritableByOthers(path, what string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("%s %s is writable by others (mode %s): %w; run chmod o-w on it", what, path, fi.Mode().Perm(), ErrInsecure)
	}
	for child, dir := path, filepath.Dir(path); ; child, dir = dir, filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("%s %s: directory %s: %w", what, path, dir, err)
		}
		if di.Mode().Perm()&0o002 != 0 {
			if di.Mode()&fs.ModeSticky == 0 || !ownedByUs(child) {
				return fmt.Errorf("%s %s: the directory %s above it is writable by others (mode %s): %w; run chmod o-w on it",
					what, path, dir, di.Mode().Perm()|di.Mode()&fs.ModeSticky, ErrInsecure)
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// ownedByUs reports whether path belongs to the runner's user or root.
func ownedByUs(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return st.Uid == 0 || int(st.Uid) == os.Geteuid()
}

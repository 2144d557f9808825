package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Listing describes one file of the plugin directory.
type Listing struct {
	// Name is the plugin's name from its file name (the whole file name when it does
	// not start with Prefix).
	Name string
	// Kinds, Version and Protocol are what the plugin reported; empty on error.
	Kinds    []sdk.Kind
	Version  string
	Protocol int
	// Path is the file's path and SHA256 its hex SHA-256.
	Path   string
	SHA256 string
	// Err says why the file is not a usable plugin; nil when it is.
	Err error
}

// List starts every file of the plugin directory, one after the other, asks it what it
// is and stops it. A broken file is listed with its error, not hidden; a file the host
// refuses to run (see Open: unpinned while a lock file is in force, insecure, a symlink
// leaving the directory or leading nowhere) is listed with the reason, never started. A
// missing or unreadable directory gives one listing carrying the error.
func (h *Host) List(ctx context.Context) []Listing {
	entries, err := os.ReadDir(h.opts.Dir)
	if err != nil {
		return []Listing{{Path: h.opts.Dir, Err: fmt.Errorf("plugin directory: %w", err)}}
	}
	var out []Listing
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		path := filepath.Join(h.opts.Dir, e.Name())
		l := Listing{Name: e.Name(), Path: path}
		name, ok := strings.CutPrefix(e.Name(), Prefix)
		if ok {
			l.Name = name
		}
		l.Err = h.describe(ctx, name, path, ok, &l)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describe fills l from the plugin at path, started for the occasion when the host would
// run it.
func (h *Host) describe(ctx context.Context, name, path string, named bool, l *Listing) error {
	resolved, err := h.resolve(name, path)
	if err != nil {
		return err
	}
	if l.SHA256, err = fileSHA256(resolved); err != nil {
		return err
	}
	if !named {
		return fmt.Errorf("file %s is not named %sNAME", path, Prefix)
	}
	if err := h.pinned(name); err != nil {
		return err
	}
	p, err := host.Start(ctx, host.Config{Path: resolved, SHA256: h.opts.Checksums[name], Logger: h.logger})
	if err != nil {
		return err
	}
	defer p.Kill()
	info := p.Info()
	l.Kinds, l.Version, l.Protocol = info.Kinds, info.Version, info.Protocol
	if info.Name != name {
		return fmt.Errorf("plugin %s reports the name %q", path, info.Name)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hash := sha256.New()
	if _, err := io.Copy(hash, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// Package memdir is a complete checkpoint storage in one file: sdk/dirstorage does the
// checkpoint work, and the file system it writes through is a map in the plugin's memory.
// Checkpoints die with the plugin process, as jmstorage's do without a dir; a storage for
// another medium writes the same ten methods for it (boltstate's boltfs.go over bbolt
// files, fsstorage over the local disk and S3).
//
// It imports only the SDK's contract and sdk/dirstorage: never the SDK's server or host
// end, nor anything of this repository outside the SDK module.
package memdir

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// Plugin is the storage: a dirstorage.Storage plus the two methods of sdk.Plugin.
type Plugin struct {
	*dirstorage.Storage
	fs *memFS
}

// New returns the plugin; Configure sets its options.
func New() *Plugin {
	fs := &memFS{nodes: map[string]*node{"/": {dir: true}}}
	return &Plugin{Storage: dirstorage.New(fs, dirstorage.Config{Name: "memdir"}), fs: fs}
}

// PluginInfo implements sdk.Plugin.
func (p *Plugin) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: "memdir", Version: "0.1.0"} }

// Configure implements sdk.Plugin: "dir", "savepoint-dir", "data-inline-threshold" and
// "write-buffer-size", as dirstorage reads them.
func (p *Plugin) Configure(_ context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown(dirstorage.OptionKeys()...); err != nil {
		return err
	}
	cfg, err := dirstorage.ParseOptions(p.fs, opts)
	if err != nil {
		return err
	}
	cfg.Name = "memdir"
	p.Storage = dirstorage.New(p.fs, cfg)
	return nil
}

// memFS is a dirstorage.FS in memory. Names are clean absolute paths.
type memFS struct {
	mu    sync.Mutex
	nodes map[string]*node // files and directories by name; "/" is the root
}

type node struct {
	dir     bool
	data    []byte
	modTime time.Time
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// lock locks m and returns its unlock, for "defer m.lock()()".
func (m *memFS) lock() func() { m.mu.Lock(); return m.mu.Unlock }

// file returns the file name, nil if it is missing or a directory. m.mu must be held.
func (m *memFS) file(name string) *node {
	if n := m.nodes[name]; n != nil && !n.dir {
		return n
	}
	return nil
}

// below returns the names below directory dir. m.mu must be held.
func (m *memFS) below(dir string) []string {
	var out []string
	for n := range m.nodes {
		if strings.HasPrefix(n, strings.TrimSuffix(dir, "/")+"/") {
			out = append(out, n)
		}
	}
	return out
}

// add creates name, a file or a directory, in an existing directory. m.mu must be held.
func (m *memFS) add(op, name string, n *node) error {
	if m.nodes[name] != nil {
		return pathErr(op, name, fs.ErrExist)
	}
	if parent := m.nodes[filepath.Dir(name)]; parent == nil || !parent.dir {
		return pathErr(op, name, fs.ErrNotExist)
	}
	m.nodes[name] = n
	return nil
}

func (m *memFS) Create(name string) (dirstorage.File, error) {
	defer m.lock()()
	f := &node{modTime: time.Now()}
	if err := m.add("create", name, f); err != nil {
		return nil, err
	}
	return &writer{m: m, f: f}, nil
}

// writer appends to a file (removed meanwhile, to nothing). Bytes are in memory once
// written, so Sync has nothing to do.
type writer struct {
	m *memFS
	f *node
}

func (w *writer) Write(p []byte) (int, error) {
	defer w.m.lock()()
	w.f.data, w.f.modTime = append(w.f.data, p...), time.Now()
	return len(p), nil
}

func (w *writer) Sync() error  { return nil }
func (w *writer) Close() error { return nil }

func (m *memFS) Open(name string) (io.ReadCloser, error) {
	defer m.lock()()
	if f := m.file(name); f != nil {
		return io.NopCloser(bytes.NewReader(f.data)), nil
	}
	return nil, pathErr("open", name, fs.ErrNotExist)
}

func (m *memFS) Stat(name string) (dirstorage.FileInfo, error) {
	defer m.lock()()
	n := m.nodes[name]
	if n == nil {
		return dirstorage.FileInfo{}, pathErr("stat", name, fs.ErrNotExist)
	}
	return dirstorage.FileInfo{Size: int64(len(n.data)), ModTime: n.modTime, IsDir: n.dir, IsRegular: !n.dir}, nil
}

func (m *memFS) RenameNoReplace(oldname, newname string) error {
	defer m.lock()()
	f := m.file(oldname)
	if f == nil {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	if err := m.add("rename", newname, f); err != nil {
		return err
	}
	delete(m.nodes, oldname)
	return nil
}

func (m *memFS) Remove(name string) error {
	defer m.lock()()
	if m.nodes[name] == nil {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if len(m.below(name)) > 0 {
		return pathErr("remove", name, fs.ErrInvalid) // a directory that is not empty
	}
	delete(m.nodes, name)
	return nil
}

func (m *memFS) RemoveAll(name string) error {
	defer m.lock()()
	for _, n := range append(m.below(name), name) {
		delete(m.nodes, n)
	}
	return nil
}

func (m *memFS) List(dir string) ([]dirstorage.DirEntry, error) {
	defer m.lock()()
	if n := m.nodes[dir]; n == nil || !n.dir {
		return nil, pathErr("list", dir, fs.ErrNotExist)
	}
	var out []dirstorage.DirEntry
	for _, n := range m.below(dir) {
		if filepath.Dir(n) == dir {
			out = append(out, dirstorage.DirEntry{Name: filepath.Base(n), IsDir: m.nodes[n].dir})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *memFS) Mkdir(name string) error {
	defer m.lock()()
	return m.add("mkdir", name, &node{dir: true})
}

func (m *memFS) MkdirAll(name string) error {
	defer m.lock()()
	for d := name; ; d = filepath.Dir(d) {
		if n := m.nodes[d]; n != nil {
			if !n.dir {
				return pathErr("mkdir", d, fs.ErrExist)
			}
			return nil
		}
		m.nodes[d] = &node{dir: true}
	}
}

func (m *memFS) SyncDir(string) error { return nil }

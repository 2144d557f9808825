package boltstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
	"github.com/flowstate/flowstate/sdk/filelease"
	"github.com/flowstate/flowstate/sdk/layout"
)

// boltFS is the file system the checkpoint storage writes through (dirstorage.FS): a job's
// directory <dir>/<job> lives in the bbolt file <dir>/<job>/checkpoints.db, a savepoint
// directory in its savepoint.db. In a file, bucket "tree" holds every file as a bucket of
// chunks keyed by its path, and every directory as the empty value of its path plus "/".
// A committed transaction is durable (bbolt fsyncs), so Sync commits and SyncDir does
// nothing. The directories above jobs and savepoints are the local disk's.
type boltFS struct {
	root string // the checkpoint directory
}

var (
	bucketTree = []byte("tree")
	keyModTime = []byte("t") // in a file's bucket, beside its 4-byte chunk numbers
)

// chunkSize bounds a chunk of a file and the bytes a file holds in memory.
const chunkSize = 1 << 20

// volume returns the bbolt file that holds name and name's path in it ("" for the
// directory the file stands for); ok is false for a directory of the local disk.
func (f boltFS) volume(name string) (file, key string, ok bool) {
	for d := name; d != filepath.Dir(d); d = filepath.Dir(d) {
		if layout.IsSavepointDir(filepath.Base(d)) {
			return filepath.Join(d, savepointFileName), strings.TrimPrefix(name[len(d):], "/"), true
		}
	}
	if rel, err := filepath.Rel(f.root, name); f.root != "" && err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		job, key, _ := strings.Cut(rel, "/")
		return filepath.Join(f.root, job, jobFileName), key, true
	}
	return "", "", false
}

// update runs fn in a write transaction of name's file, creating the file if need be.
func (f boltFS) update(file string, fn func(tree *bolt.Bucket) error) error {
	db, release, err := acquire(file, true)
	if err != nil {
		return err
	}
	defer release()
	return db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketTree)) })
}

// view runs fn in a read transaction of file; a missing file is fs.ErrNotExist.
func (f boltFS) view(file string, fn func(tree *bolt.Bucket) error) error {
	db, release, err := acquire(file, false)
	if err != nil {
		return err
	}
	defer release()
	return db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketTree)) })
}

// isDir reports whether key is a directory of tree: the root, a marker, or a prefix.
func isDir(tree *bolt.Bucket, key string) bool {
	if key == "" || tree.Get([]byte(key+"/")) != nil {
		return true
	}
	k, _ := tree.Cursor().Seek([]byte(key + "/"))
	return k != nil && bytes.HasPrefix(k, []byte(key+"/"))
}

func notExist(op, name string) error { return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} }
func exist(op, name string) error    { return &fs.PathError{Op: op, Path: name, Err: fs.ErrExist} }

// Create implements dirstorage.FS: an empty file bucket.
func (f boltFS) Create(name string) (dirstorage.File, error) {
	file, key, ok := f.volume(name)
	if !ok || key == "" {
		return nil, fmt.Errorf("create %s: not a file of a job or savepoint directory: %w", name, fs.ErrInvalid)
	}
	err := f.update(file, func(tree *bolt.Bucket) error {
		if isDir(tree, key) {
			return exist("create", name)
		}
		b, err := tree.CreateBucket([]byte(key))
		if errors.Is(err, bolterrors.ErrBucketExists) {
			return exist("create", name)
		} else if err != nil {
			return err
		}
		return b.Put(keyModTime, now())
	})
	if err != nil {
		return nil, err
	}
	return &boltFile{fs: f, file: file, key: key}, nil
}

// boltFile is a file being written: its bytes collect up to chunkSize, then go to a chunk.
type boltFile struct {
	fs        boltFS
	file, key string
	buf       []byte
	chunk     uint32
}

// Write implements io.Writer.
func (w *boltFile) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for len(w.buf) >= chunkSize {
		if err := w.put(w.buf[:chunkSize]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[chunkSize:]...)
	}
	return len(p), nil
}

// put commits data as the file's next chunk.
func (w *boltFile) put(data []byte) error {
	return w.fs.update(w.file, func(tree *bolt.Bucket) error {
		b := tree.Bucket([]byte(w.key))
		if b == nil {
			return notExist("write", w.key)
		}
		w.chunk++
		if err := b.Put(binary.BigEndian.AppendUint32(nil, w.chunk), data); err != nil {
			return err
		}
		return b.Put(keyModTime, now())
	})
}

// Sync implements dirstorage.File: it commits what is buffered.
func (w *boltFile) Sync() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.put(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close implements dirstorage.File; bytes not synced are dropped.
func (w *boltFile) Close() error { w.buf = nil; return nil }

// Open implements dirstorage.FS: the reader reads a chunk per transaction. A name outside
// the volumes is a local file (as Stat, Remove and List take it): a backend's file the
// storage adopted in place (sdk.RemoteFileAdopter, which sdk/dirstorage implements).
func (f boltFS) Open(name string) (io.ReadCloser, error) {
	if _, _, ok := f.volume(name); !ok {
		return dirstorage.Local{}.Open(name) // outside the volumes, as Stat: a file adopted in place
	}
	info, err := f.Stat(name)
	if err != nil {
		return nil, err
	}
	if !info.IsRegular {
		return nil, fmt.Errorf("open %s: a directory: %w", name, fs.ErrInvalid)
	}
	file, key, _ := f.volume(name)
	return &boltReader{fs: f, file: file, key: key}, nil
}

// boltReader reads a file chunk by chunk.
type boltReader struct {
	fs        boltFS
	file, key string
	next      uint32
	cur       []byte
}

// Read implements io.Reader.
func (r *boltReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		err := r.fs.view(r.file, func(tree *bolt.Bucket) error {
			b := tree.Bucket([]byte(r.key))
			if b == nil {
				return notExist("read", r.key)
			}
			k, v := b.Cursor().Seek(binary.BigEndian.AppendUint32(nil, r.next+1))
			if k == nil || len(k) != 4 {
				return io.EOF
			}
			r.next, r.cur = binary.BigEndian.Uint32(k), bytes.Clone(v)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close implements io.Closer.
func (r *boltReader) Close() error { return nil }

// Stat implements dirstorage.FS.
func (f boltFS) Stat(name string) (dirstorage.FileInfo, error) {
	file, key, ok := f.volume(name)
	if !ok {
		return dirstorage.Local{}.Stat(name)
	}
	var info dirstorage.FileInfo
	err := f.view(file, func(tree *bolt.Bucket) error {
		if b := tree.Bucket([]byte(key)); b != nil && key != "" {
			info.IsRegular = true
			if t := b.Get(keyModTime); len(t) == 8 {
				info.ModTime = time.Unix(0, int64(binary.BigEndian.Uint64(t)))
			}
			return b.ForEach(func(k, v []byte) error {
				if len(k) == 4 {
					info.Size += int64(len(v))
				}
				return nil
			})
		}
		if info.IsDir = isDir(tree, key); !info.IsDir {
			return notExist("stat", name)
		}
		return nil
	})
	return info, err
}

// RenameNoReplace implements dirstorage.FS: the file's bucket is copied and deleted in one
// transaction.
func (f boltFS) RenameNoReplace(oldname, newname string) error {
	file, from, _ := f.volume(oldname)
	to, key, _ := f.volume(newname)
	if to != file || file == "" || from == "" || key == "" {
		return fmt.Errorf("rename %s to %s: not two files of one bbolt file: %w", oldname, newname, fs.ErrInvalid)
	}
	return f.update(file, func(tree *bolt.Bucket) error {
		src := tree.Bucket([]byte(from))
		if src == nil {
			return notExist("rename", oldname)
		}
		if tree.Bucket([]byte(key)) != nil || isDir(tree, key) {
			return exist("rename", newname)
		}
		dst, err := tree.CreateBucket([]byte(key))
		if err != nil {
			return err
		}
		if err := src.ForEach(dst.Put); err != nil {
			return err
		}
		return tree.DeleteBucket([]byte(from))
	})
}

// Remove implements dirstorage.FS.
func (f boltFS) Remove(name string) error {
	file, key, ok := f.volume(name)
	if !ok || key == "" {
		return dirstorage.Local{}.Remove(name)
	}
	return f.update(file, func(tree *bolt.Bucket) error {
		if tree.Bucket([]byte(key)) != nil {
			return tree.DeleteBucket([]byte(key))
		}
		if k, _ := tree.Cursor().Seek([]byte(key + "/")); k != nil && bytes.HasPrefix(k, []byte(key+"/")) && len(k) > len(key)+1 {
			return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
		}
		if tree.Get([]byte(key+"/")) == nil {
			return notExist("remove", name)
		}
		return tree.Delete([]byte(key + "/"))
	})
}

// RemoveAll implements dirstorage.FS. A job's or savepoint's file stays, empty.
func (f boltFS) RemoveAll(name string) error {
	file, key, ok := f.volume(name)
	if !ok {
		return dirstorage.Local{}.RemoveAll(name)
	}
	err := f.update(file, func(tree *bolt.Bucket) error {
		prefix := []byte(key + "/")
		if key == "" {
			prefix = nil
		}
		var doomed [][]byte
		c := tree.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			doomed = append(doomed, bytes.Clone(k))
		}
		if key != "" {
			doomed = append(doomed, []byte(key))
		}
		for _, k := range doomed {
			err := tree.DeleteBucket(k)
			if errors.Is(err, bolterrors.ErrIncompatibleValue) { // a file, not a directory
				err = tree.Delete(k)
			}
			if err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// List implements dirstorage.FS.
func (f boltFS) List(dir string) ([]dirstorage.DirEntry, error) {
	file, key, ok := f.volume(dir)
	if !ok {
		return dirstorage.Local{}.List(dir)
	}
	seen := map[string]bool{}
	err := f.view(file, func(tree *bolt.Bucket) error {
		if !isDir(tree, key) {
			return notExist("list", dir)
		}
		prefix := []byte(key + "/")
		if key == "" {
			prefix = nil
		}
		c := tree.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if rest := string(k[len(prefix):]); rest != "" {
				first, _, sub := strings.Cut(rest, "/")
				seen[first] = seen[first] || sub
			}
		}
		return nil
	})
	out := make([]dirstorage.DirEntry, 0, len(seen))
	for name, sub := range seen {
		out = append(out, dirstorage.DirEntry{Name: name, IsDir: sub})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Mkdir implements dirstorage.FS.
func (f boltFS) Mkdir(name string) error {
	file, key, ok := f.volume(name)
	if !ok {
		return dirstorage.Local{}.Mkdir(name)
	}
	if key == "" {
		if err := os.Mkdir(name, 0o755); err != nil {
			return err
		}
	}
	return f.update(file, func(tree *bolt.Bucket) error {
		if key == "" {
			return nil
		}
		if isDir(tree, key) || tree.Bucket([]byte(key)) != nil {
			return exist("mkdir", name)
		}
		return tree.Put([]byte(key+"/"), []byte{})
	})
}

// MkdirAll implements dirstorage.FS.
func (f boltFS) MkdirAll(name string) error {
	file, key, ok := f.volume(name)
	if !ok {
		return dirstorage.Local{}.MkdirAll(name)
	}
	return f.update(file, func(tree *bolt.Bucket) error {
		if key == "" || isDir(tree, key) {
			return nil
		}
		return tree.Put([]byte(key+"/"), []byte{})
	})
}

// SyncDir implements dirstorage.FS: every commit is already durable.
func (f boltFS) SyncDir(name string) error { return nil }

// LeaseStore implements dirstorage.LeaseFS: the record <dir>/<job>/_lease is a file of the
// local disk beside checkpoints.db, kept by sdk/filelease.
func (f boltFS) LeaseStore(name string) (sdk.LeaseStore, error) { return filelease.New(name), nil }

func now() []byte { return binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())) }

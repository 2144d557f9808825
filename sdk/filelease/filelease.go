// Package filelease implements sdk.LeaseStore with one file of a local file system, for
// checkpoint storages that keep a job's checkpoints in a directory (fsstorage on file://,
// jmstorage with a dir) and for the runner's own leases on output directories.
//
// The record lives in the file Path: a header line "flowstate-lease 1 <version>" and then
// the record's bytes. The version is a counter that every replacement increments.
//
//   - Creating the record (ifVersion "") writes a temporary file beside it, syncs it and
//     publishes it with link(2), which fails when the record exists: of racing creators
//     exactly one wins, on a local file system and on NFS alike.
//   - Replacing it takes an exclusive flock(2) of the lock file Path+".lock", reads the
//     current version, and only when it is ifVersion writes a temporary file, syncs it
//     and renames it over the record. rename(2) is atomic, so a reader without the lock
//     sees the old record or the new one, whole.
//   - The directory is synced after both, so a version a writer was told about survives
//     a power loss.
//
// What it does not protect: flock(2) orders the replacements of processes on one machine
// (and across machines on file systems that implement it across clients, which NFS does
// not reliably do). Two machines replacing one record at the same instant over NFS could
// both succeed. Use a storage with a real compare-and-swap (fsstorage on s3://) when
// runners of one job may start on different machines at once.
//
// The lock is taken without blocking and retried until the context ends: a holder frozen
// (SIGSTOP) in the middle of a replacement delays the others, and never blocks them past
// their deadline. Temporary files of a writer that crashed stay behind, named
// Path+".tmp-*"; they are harmless and may be deleted.
//
// It imports only the contract (package sdk), never gRPC, the protocol, the server or the
// host end, so plugins and the runner both link it.
package filelease

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// Store is the lease record in the file Path. It is safe for concurrent use; the zero
// value is not usable.
type Store struct {
	// Path is the record's file. Its directory is created when the record is.
	Path string
}

var _ sdk.LeaseStore = (*Store)(nil)

// New returns the store of the record in the file path.
func New(path string) *Store { return &Store{Path: path} }

// header starts every record file; the version follows it.
const header = "flowstate-lease 1 "

// lockRetry is how often a busy lock file is tried again.
const lockRetry = 5 * time.Millisecond

// ReadLease implements sdk.LeaseStore.
func (s *Store) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	if err := ctx.Err(); err != nil {
		return sdk.LeaseRecord{}, err
	}
	data, version, err := s.read()
	if err != nil {
		return sdk.LeaseRecord{}, err
	}
	return sdk.LeaseRecord{Data: data, Version: strconv.FormatUint(version, 10)}, nil
}

// read returns the record's bytes and version.
func (s *Store) read() ([]byte, uint64, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("lease file %s: %w", s.Path, sdk.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read lease file: %w", err)
	}
	line, data, ok := bytes.Cut(b, []byte("\n"))
	rest, hasHeader := bytes.CutPrefix(line, []byte(header))
	version, perr := strconv.ParseUint(string(rest), 10, 64)
	if !ok || !hasHeader || perr != nil || version == 0 {
		return nil, 0, fmt.Errorf("lease file %s does not start with %q and a version: %w", s.Path, header, sdk.ErrCorrupt)
	}
	return data, version, nil
}

// WriteLease implements sdk.LeaseStore.
func (s *Store) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(data) > sdk.MaxLeaseSize {
		return "", fmt.Errorf("lease file %s: a record of %d bytes exceeds %d: %w", s.Path, len(data), sdk.MaxLeaseSize, sdk.ErrInvalidArgument)
	}
	if ifVersion == "" {
		return s.create(data)
	}
	want, err := strconv.ParseUint(ifVersion, 10, 64)
	if err != nil {
		return "", fmt.Errorf("lease file %s: version %q was never this file's: %w", s.Path, ifVersion, sdk.ErrConflict)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	_, version, err := s.read()
	if errors.Is(err, sdk.ErrNotFound) {
		return "", fmt.Errorf("lease file %s: replacing version %d: no record: %w", s.Path, want, sdk.ErrConflict)
	}
	if err != nil {
		return "", err
	}
	if version != want {
		return "", fmt.Errorf("lease file %s: replacing version %d: the record is at version %d: %w", s.Path, want, version, sdk.ErrConflict)
	}
	tmp, err := s.writeTemp(version+1, data)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("replace lease file: %w", err)
	}
	return strconv.FormatUint(version+1, 10), syncDir(filepath.Dir(s.Path))
}

// create publishes a first record with link(2), which never replaces a file.
func (s *Store) create(data []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return "", fmt.Errorf("lease file %s: create its directory: %w", s.Path, err)
	}
	tmp, err := s.writeTemp(1, data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.Path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("lease file %s exists: %w", s.Path, sdk.ErrConflict)
		}
		return "", fmt.Errorf("create lease file: %w", err)
	}
	return "1", syncDir(filepath.Dir(s.Path))
}

// writeTemp writes a synced temporary record file of the given version beside Path.
func (s *Store) writeTemp(version uint64, data []byte) (string, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := s.Path + ".tmp-" + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("lease file: %w", err)
	}
	content := append([]byte(header+strconv.FormatUint(version, 10)+"\n"), data...)
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("lease file: write %s: %w", tmp, err)
	}
	return tmp, nil
}

// lock takes the exclusive flock of Path+".lock", retrying while another process holds
// it, until ctx ends.
func (s *Store) lock(ctx context.Context) (unlock func(), err error) {
	name := s.Path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lease lock file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lease lock file %s: flock: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lease lock file %s is held by another process: %w", name, ctx.Err())
		case <-time.After(lockRetry):
		}
	}
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("lease file: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("lease file: sync directory %s: %w", dir, err)
	}
	return nil
}

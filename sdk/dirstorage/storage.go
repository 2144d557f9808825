// Package dirstorage is a checkpoint storage in Flink's directory layout (sdk/layout) over
// any file system that offers a few operations (FS): create, open, stat,
// rename-without-replace, list, remove, mkdir, fsync. A plugin author implements FS for
// the medium and gets everything else, which every directory-based storage otherwise
// writes again:
//
//	<dir>/<job-id>/shared/        state streams of scope SHARED (incremental checkpoints)
//	<dir>/<job-id>/taskowned/     reserved for state owned by tasks
//	<dir>/<job-id>/chk-N/         exclusive state files of checkpoint N (random names)
//	<dir>/<job-id>/chk-N/_metadata
//	<dir>/<job-id>/_lease         the job's lease record, when the FS can keep one
//	<base>/savepoint-<job>-<hex>/ a savepoint, with all its state inside
//
// What a Storage does over that layout:
//
//   - Atomic publication: a checkpoint exists only once its _metadata file does. The
//     metadata is written to a temporary file, synced, then renamed to _metadata without
//     replacing anything, and the directories are synced; state files are synced before
//     it. A second publication of one checkpoint fails, and nothing is ever replaced.
//   - Inline state: a stream smaller than the data inline threshold comes back as an
//     inline handle and never touches the file system; larger ones collect small writes
//     in a buffer.
//   - Leftover cleanup: InitializeBaseLocationsForCheckpoint removes chk-N directories
//     without _metadata and temporary metadata files.
//   - Path checks: job ids are single directory names; DiscardState deletes nothing
//     outside the checkpoint and savepoint directories but the files the job adopted;
//     DisposeCheckpoint disposes of chk-N
//     and savepoint directories only, deletes only the files it wrote there, and removes
//     the directory only once it is empty; a savepoint target must be absolute, without
//     "..", and not lie (after symbolic links) in the job's checkpoint directory or in a
//     checkpoint or savepoint.
//   - Optional interfaces: every access implements sdk.SharedStateLister (the files in
//     shared/) and sdk.RemoteFileAdopter (files on the medium of the checkpoint directory,
//     recorded by markers in shared/, see adoptedPrefix); sdk.LeaseStore when the FS
//     implements LeaseFS; sdk.LocalStateLocator when it implements LocalPather.
//
// Pointers (CompletedCheckpointStorageLocation.ExternalPointer) are the chk-N or savepoint
// directories, as paths or the FS's URIs; handle refs are file:// URIs or the FS's URIs.
// ResolveCheckpoint accepts a directory or its _metadata file.
//
// A plugin embeds a *Storage, built by New in Configure from ParseOptions, and adds
// PluginInfo and Configure: plugins/fsstorage, jmstorage's directory mode and
// examples/thirdparty are built this way.
//
// It imports only the contract and the SDK's helpers (sdk, sdk/bytesize, sdk/filelease,
// sdk/layout, sdk/optional), never gRPC, the protocol, the server or the host end, so a
// plugin links it without any code of the wire.
package dirstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Config configures a Storage.
type Config struct {
	// Name is the storage's name; every error message starts with it.
	Name string
	// Dir is the checkpoint directory, a name of the FS; "" when none is configured, in
	// which case CreateCheckpointStorage fails and only savepoints can be written.
	Dir string
	// SavepointDir is the default savepoint directory, "" for none.
	SavepointDir string
	// InlineThreshold: state streams smaller than this many bytes come back inline.
	InlineThreshold int64
	// WriteBufferSize is the buffer in which state streams collect small writes; 0 means
	// DefaultWriteBufferSize. The buffer is never smaller than the inline threshold.
	WriteBufferSize int
	// HighlyAvailable is what accesses answer to SupportsHighlyAvailableStorage: whether
	// checkpoints outlive this machine.
	HighlyAvailable bool
}

// Storage is a checkpoint storage over an FS. It implements every method of
// sdk.CheckpointStorage but those of sdk.Plugin, which the plugin embedding it adds. It is
// safe for concurrent use.
type Storage struct {
	fs   FS
	cfg  Config
	errs Errors
}

// New returns the storage of cfg on fsys.
func New(fsys FS, cfg Config) *Storage {
	if cfg.WriteBufferSize <= 0 {
		cfg.WriteBufferSize = DefaultWriteBufferSize
	}
	if cfg.Name == "" {
		cfg.Name = "dirstorage"
	}
	return &Storage{fs: fsys, cfg: cfg, errs: Errors(cfg.Name)}
}

// Config returns the storage's configuration.
func (s *Storage) Config() Config { return s.cfg }

// CreateCheckpointStorage implements sdk.CheckpointStorage. It needs a checkpoint
// directory; the job id becomes a directory name, so it must not contain a path separator
// or "..".
func (s *Storage) CreateCheckpointStorage(_ context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	if err := layout.CheckJobID(jobID); err != nil {
		return nil, s.errs.Wrap(err, "checkpoint storage")
	}
	if s.cfg.Dir == "" {
		return nil, s.errs.New(sdk.ErrInvalidArgument,
			"no checkpoint directory configured for job %q: set option %q (execution.checkpointing.dir)", jobID, sdk.OptionCheckpointDir)
	}
	return s.newAccess(jobID), nil
}

// OpenState returns the bytes of a handle a Storage wrote, for any job: inline handles read
// their own bytes, the others open the file their ref names, wherever it is (a savepoint
// may live anywhere).
func (s *Storage) OpenState(_ context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	if h.Ref == "" {
		return io.NopCloser(bytes.NewReader(h.Inline)), nil
	}
	p, err := s.name(h.Ref)
	if err != nil {
		return nil, s.errs.Wrap(err, "state handle %q", h.Ref)
	}
	r, err := s.fs.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.errs.WrapAs(sdk.ErrNotFound, err, "state handle %q: open '%s'", h.Ref, p)
	}
	if err != nil {
		return nil, s.errs.Wrap(err, "state handle %q: open '%s'", h.Ref, p)
	}
	return r, nil
}

// name turns a path or URI a user or a handle gave into a name of the storage's FS.
func (s *Storage) name(pathOrURI string) (string, error) { return parseName(s.fs, pathOrURI) }

// parseName is Storage.name for any FS: the FS's own URIs (Namer), else a local path or a
// file:// URI.
func parseName(fsys FS, pathOrURI string) (string, error) {
	if n, ok := fsys.(Namer); ok {
		name, ok, err := n.Name(strings.TrimSpace(pathOrURI))
		if err != nil {
			return "", fmt.Errorf("%w: %w", sdk.ErrInvalidArgument, err)
		}
		if ok {
			return name, nil
		}
	}
	return layout.LocalPath(pathOrURI)
}

// uri returns the URI of the FS's URIs for name, "" for a local path.
func (s *Storage) uri(name string) string {
	if n, ok := s.fs.(Namer); ok {
		return n.URI(name)
	}
	return ""
}

// ref is the handle ref of the file name: its URI, a file:// URI for a local path.
func (s *Storage) ref(name string) string {
	if u := s.uri(name); u != "" {
		return u
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(name)}).String()
}

// pointer is the external pointer of directory dir: its URI, or the path itself.
func (s *Storage) pointer(dir string) string {
	if u := s.uri(dir); u != "" {
		return u
	}
	return dir
}

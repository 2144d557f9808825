package ref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// Storage is a minimal, correct checkpoint storage keeping everything in memory. It
// proves the kit can be satisfied by a storage with no files at all; of the optional
// interfaces it implements sdk.LeaseStore, and sdk.RemoteFileAdopter for local files.
type Storage struct {
	mu        sync.Mutex
	seq       int
	blobs     map[string][]byte
	owner     map[string]string // exclusive blob -> location reference
	completed map[string]completedCheckpoint
	defSP     string
	leases    map[string]lease  // job -> lease record
	adopted   map[string]string // ref of an adopted local file -> its path
}

type lease struct {
	data    []byte
	version int
}

type completedCheckpoint struct {
	loc  sdk.CompletedCheckpointStorageLocation
	job  string
	sp   bool
	seq  int
	blob string
}

// NewStorage returns an empty Storage.
func NewStorage() *Storage {
	return &Storage{blobs: map[string][]byte{}, owner: map[string]string{}, completed: map[string]completedCheckpoint{}, leases: map[string]lease{}, adopted: map[string]string{}}
}

// PluginInfo implements sdk.Plugin.
func (s *Storage) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "sdktest-ref-storage", Version: "0.0.1"}
}

// Configure implements sdk.Plugin; it takes sdk.OptionSavepointDir.
func (s *Storage) Configure(ctx context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown(sdk.OptionSavepointDir); err != nil {
		return err
	}
	s.defSP = opts[sdk.OptionSavepointDir]
	return nil
}

// ResolveCheckpoint implements sdk.CheckpointStorage.
func (s *Storage) ResolveCheckpoint(ctx context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pointer == "" {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("empty pointer: %w", sdk.ErrInvalidArgument)
	}
	c, ok := s.completed[pointer]
	if !ok {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("pointer %q: %w", pointer, sdk.ErrNotFound)
	}
	return c.loc, nil
}

// CreateCheckpointStorage implements sdk.CheckpointStorage.
func (s *Storage) CreateCheckpointStorage(ctx context.Context, job string) (sdk.CheckpointStorageAccess, error) {
	return &access{s: s, job: job}, nil
}

type access struct {
	s   *Storage
	job string
}

func (a *access) SupportsHighlyAvailableStorage() bool { return false }
func (a *access) HasDefaultSavepointLocation() bool    { return a.s.defSP != "" }

func (a *access) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	prefix := "ref://" + a.job + "/chk-"
	for blob, loc := range a.s.owner {
		if _, done := a.s.completed[loc]; strings.HasPrefix(loc, prefix) && !done {
			delete(a.s.blobs, blob)
			delete(a.s.owner, blob)
		}
	}
	return nil
}

func (a *access) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	return &location{a: a, ref: fmt.Sprintf("ref://%s/chk-%d", a.job, id), id: id}, nil
}

func (a *access) InitializeLocationForSavepoint(ctx context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	if target == "" {
		target = a.s.defSP
	}
	if target == "" {
		//lint:ignore ST1005 Flink's message, word for word
		return nil, fmt.Errorf("No savepoint location given and no default location configured.: %w", sdk.ErrInvalidArgument)
	}
	a.s.mu.Lock()
	a.s.seq++
	n := a.s.seq
	a.s.mu.Unlock()
	return &location{a: a, ref: fmt.Sprintf("ref-savepoint://%s/%d-%d", target, id, n), id: id, sp: true}, nil
}

func (a *access) ListCompletedCheckpoints(ctx context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	var cs []completedCheckpoint
	for _, c := range a.s.completed {
		if c.job == a.job && !c.sp {
			cs = append(cs, c)
		}
	}
	out := make([]sdk.CompletedCheckpointStorageLocation, len(cs))
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if cs[j].seq < cs[i].seq {
				cs[i], cs[j] = cs[j], cs[i]
			}
		}
		out[i] = cs[i].loc
	}
	return out, nil
}

func (a *access) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if p, ok := a.s.adopted[h.Ref]; ok {
		return os.Open(p)
	}
	b, ok := a.s.blobs[h.Ref]
	if !ok {
		return nil, fmt.Errorf("state %q: %w", h.Ref, sdk.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (a *access) DiscardState(ctx context.Context, hs []sdk.StreamStateHandle) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	for _, h := range hs {
		delete(a.s.blobs, h.Ref)
		if p, ok := a.s.adopted[h.Ref]; ok && Broken != "adopted-kept" {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			delete(a.s.adopted, h.Ref)
		}
	}
	return nil
}

var _ sdk.RemoteFileAdopter = (*access)(nil)

// AdoptRemoteFiles implements sdk.RemoteFileAdopter for local files (file:// URIs): the
// storage reads and deletes them where they are.
func (a *access) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	out := make([]sdk.StreamStateHandle, len(files))
	for i, f := range files {
		u, err := url.Parse(f.Ref)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("adopt %q: not a local file: %w", f.Ref, sdk.ErrUnsupported)
		}
		p := filepath.Clean(u.Path)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
			return nil, fmt.Errorf("adopt %q: no file of %d bytes there: %w", f.Ref, f.Size, sdk.ErrUnsupported)
		}
		ref := "file://" + p
		a.s.adopted[ref] = p
		out[i] = sdk.StreamStateHandle{Ref: ref, Size: f.Size, Scope: sdk.ScopeShared, Checksum: f.Checksum}
	}
	return out, nil
}

func (a *access) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if Broken == "dispose-keeps" {
		return nil
	}
	c := a.s.completed[loc.ExternalPointer]
	delete(a.s.completed, loc.ExternalPointer)
	delete(a.s.blobs, c.blob)
	a.s.dropExclusiveLocked(loc.ExternalPointer)
	return nil
}

func (s *Storage) dropExclusiveLocked(ref string) {
	for blob, loc := range s.owner {
		if loc == ref {
			delete(s.blobs, blob)
			delete(s.owner, blob)
		}
	}
}

func (a *access) Close() error { return nil }

var _ sdk.LeaseStore = (*access)(nil)

func (a *access) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	l, ok := a.s.leases[a.job]
	if !ok {
		return sdk.LeaseRecord{}, fmt.Errorf("lease of job %q: %w", a.job, sdk.ErrNotFound)
	}
	return sdk.LeaseRecord{Data: bytes.Clone(l.data), Version: fmt.Sprint(l.version)}, nil
}

func (a *access) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	l, ok := a.s.leases[a.job]
	current := ""
	if ok {
		current = fmt.Sprint(l.version)
	}
	if ifVersion != current && Broken != "lease-blind-replace" {
		return "", fmt.Errorf("lease of job %q is at version %q, not %q: %w", a.job, current, ifVersion, sdk.ErrConflict)
	}
	l = lease{data: bytes.Clone(data), version: l.version + 1}
	a.s.leases[a.job] = l
	return fmt.Sprint(l.version), nil
}

type location struct {
	a   *access
	ref string
	id  int64
	sp  bool
}

func (l *location) LocationReference() string { return l.ref }

func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &stream{l: l, scope: scope}, nil
}

func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	return &stream{l: l, meta: true}, nil
}

func (l *location) DisposeOnFailure(ctx context.Context) error {
	l.a.s.mu.Lock()
	defer l.a.s.mu.Unlock()
	l.a.s.dropExclusiveLocked(l.ref)
	return nil
}

type stream struct {
	l     *location
	scope sdk.Scope
	meta  bool
	buf   bytes.Buffer
	done  bool
}

func (s *stream) Write(p []byte) (int, error) { return s.buf.Write(p) }

func (s *stream) store() sdk.StreamStateHandle {
	st := s.l.a.s
	st.seq++
	ref := fmt.Sprintf("%s/blob-%d", s.l.ref, st.seq)
	st.blobs[ref] = bytes.Clone(s.buf.Bytes())
	if s.scope == sdk.ScopeExclusive && !s.meta {
		st.owner[ref] = s.l.ref
	}
	return sdk.StreamStateHandle{Ref: ref, Size: int64(s.buf.Len()), Scope: s.scope}
}

func (s *stream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.l.a.s.mu.Lock()
	defer s.l.a.s.mu.Unlock()
	s.done = true
	return s.store(), nil
}

func (s *stream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	st := s.l.a.s
	st.mu.Lock()
	defer st.mu.Unlock()
	s.done = true
	if _, ok := st.completed[s.l.ref]; ok {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("metadata of %q exists", s.l.ref)
	}
	h := s.store()
	loc := sdk.CompletedCheckpointStorageLocation{ExternalPointer: s.l.ref, Metadata: h, CheckpointID: s.l.id, Time: time.Now()}
	st.completed[s.l.ref] = completedCheckpoint{loc: loc, job: s.l.a.job, sp: s.l.sp, seq: st.seq, blob: h.Ref}
	return loc, nil
}

func (s *stream) Close() error {
	s.done = true
	return nil
}

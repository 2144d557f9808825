package sdktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// refStorage is a minimal, correct checkpoint storage keeping everything in memory. It
// proves the kit can be satisfied by a storage with no files at all.
type refStorage struct {
	mu        sync.Mutex
	seq       int
	blobs     map[string][]byte
	owner     map[string]string // exclusive blob -> location reference
	completed map[string]refCompleted
	defSP     string
	leases    map[string]refLease // job -> lease record
}

type refLease struct {
	data    []byte
	version int
}

type refCompleted struct {
	loc  sdk.CompletedCheckpointStorageLocation
	job  string
	sp   bool
	seq  int
	blob string
}

func newRefStorage() *refStorage {
	return &refStorage{blobs: map[string][]byte{}, owner: map[string]string{}, completed: map[string]refCompleted{}, leases: map[string]refLease{}}
}

func (s *refStorage) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "sdktest-ref-storage", Version: "0.0.1"}
}

func (s *refStorage) Configure(ctx context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown(sdk.OptionSavepointDir); err != nil {
		return err
	}
	s.defSP = opts[sdk.OptionSavepointDir]
	return nil
}

func (s *refStorage) ResolveCheckpoint(ctx context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
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

func (s *refStorage) CreateCheckpointStorage(ctx context.Context, job string) (sdk.CheckpointStorageAccess, error) {
	return &refAccess{s: s, job: job}, nil
}

type refAccess struct {
	s   *refStorage
	job string
}

func (a *refAccess) SupportsHighlyAvailableStorage() bool { return false }
func (a *refAccess) HasDefaultSavepointLocation() bool    { return a.s.defSP != "" }

func (a *refAccess) InitializeBaseLocationsForCheckpoint(ctx context.Context) error {
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

func (a *refAccess) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	return &refLocation{a: a, ref: fmt.Sprintf("ref://%s/chk-%d", a.job, id), id: id}, nil
}

func (a *refAccess) InitializeLocationForSavepoint(ctx context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	if target == "" {
		target = a.s.defSP
	}
	if target == "" {
		return nil, fmt.Errorf("No savepoint location given and no default location configured.: %w", sdk.ErrInvalidArgument)
	}
	a.s.mu.Lock()
	a.s.seq++
	n := a.s.seq
	a.s.mu.Unlock()
	return &refLocation{a: a, ref: fmt.Sprintf("ref-savepoint://%s/%d-%d", target, id, n), id: id, sp: true}, nil
}

func (a *refAccess) ListCompletedCheckpoints(ctx context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	var cs []refCompleted
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

func (a *refAccess) OpenState(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	b, ok := a.s.blobs[h.Ref]
	if !ok {
		return nil, fmt.Errorf("state %q: %w", h.Ref, sdk.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (a *refAccess) DiscardState(ctx context.Context, hs []sdk.StreamStateHandle) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	for _, h := range hs {
		delete(a.s.blobs, h.Ref)
	}
	return nil
}

func (a *refAccess) DisposeCheckpoint(ctx context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if brokenMode == "dispose-keeps" {
		return nil
	}
	c := a.s.completed[loc.ExternalPointer]
	delete(a.s.completed, loc.ExternalPointer)
	delete(a.s.blobs, c.blob)
	a.s.dropExclusiveLocked(loc.ExternalPointer)
	return nil
}

func (s *refStorage) dropExclusiveLocked(ref string) {
	for blob, loc := range s.owner {
		if loc == ref {
			delete(s.blobs, blob)
			delete(s.owner, blob)
		}
	}
}

func (a *refAccess) Close() error { return nil }

var _ sdk.LeaseStore = (*refAccess)(nil)

func (a *refAccess) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	l, ok := a.s.leases[a.job]
	if !ok {
		return sdk.LeaseRecord{}, fmt.Errorf("lease of job %q: %w", a.job, sdk.ErrNotFound)
	}
	return sdk.LeaseRecord{Data: bytes.Clone(l.data), Version: fmt.Sprint(l.version)}, nil
}

func (a *refAccess) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	l, ok := a.s.leases[a.job]
	current := ""
	if ok {
		current = fmt.Sprint(l.version)
	}
	if ifVersion != current && brokenMode != "lease-blind-replace" {
		return "", fmt.Errorf("lease of job %q is at version %q, not %q: %w", a.job, current, ifVersion, sdk.ErrConflict)
	}
	l = refLease{data: bytes.Clone(data), version: l.version + 1}
	a.s.leases[a.job] = l
	return fmt.Sprint(l.version), nil
}

type refLocation struct {
	a   *refAccess
	ref string
	id  int64
	sp  bool
}

func (l *refLocation) LocationReference() string { return l.ref }

func (l *refLocation) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	return &refStream{l: l, scope: scope}, nil
}

func (l *refLocation) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	return &refStream{l: l, meta: true}, nil
}

func (l *refLocation) DisposeOnFailure(ctx context.Context) error {
	l.a.s.mu.Lock()
	defer l.a.s.mu.Unlock()
	l.a.s.dropExclusiveLocked(l.ref)
	return nil
}

type refStream struct {
	l     *refLocation
	scope sdk.Scope
	meta  bool
	buf   bytes.Buffer
	done  bool
}

func (s *refStream) Write(p []byte) (int, error) { return s.buf.Write(p) }

func (s *refStream) store() sdk.StreamStateHandle {
	st := s.l.a.s
	st.seq++
	ref := fmt.Sprintf("%s/blob-%d", s.l.ref, st.seq)
	st.blobs[ref] = bytes.Clone(s.buf.Bytes())
	if s.scope == sdk.ScopeExclusive && !s.meta {
		st.owner[ref] = s.l.ref
	}
	return sdk.StreamStateHandle{Ref: ref, Size: int64(s.buf.Len()), Scope: s.scope}
}

func (s *refStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.l.a.s.mu.Lock()
	defer s.l.a.s.mu.Unlock()
	s.done = true
	return s.store(), nil
}

func (s *refStream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	st := s.l.a.s
	st.mu.Lock()
	defer st.mu.Unlock()
	s.done = true
	if _, ok := st.completed[s.l.ref]; ok {
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("metadata of %q exists", s.l.ref)
	}
	h := s.store()
	loc := sdk.CompletedCheckpointStorageLocation{ExternalPointer: s.l.ref, Metadata: h, CheckpointID: s.l.id, Time: time.Now()}
	st.completed[s.l.ref] = refCompleted{loc: loc, job: s.l.a.job, sp: s.l.sp, seq: st.seq, blob: h.Ref}
	return loc, nil
}

func (s *refStream) Close() error {
	s.done = true
	return nil
}

func TestRefStorage(t *testing.T) {
	for _, sp := range []string{"", "/savepoints"} {
		t.Run("savepoint-dir="+sp, func(t *testing.T) {
			CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				s := newRefStorage()
				opts := sdk.Options{}
				if sp != "" {
					opts[sdk.OptionSavepointDir] = sp
				}
				if err := s.Configure(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

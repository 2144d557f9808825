// Package ref holds the reference plugins of the SDK's tests: a minimal, correct state
// backend and checkpoint storage in memory, which pass the conformance kit (sdk/sdktest).
// The kit's own tests run them in-process; the test plugin refprev serves them through the
// process boundary.
//
// It imports only what a third party's plugin may, the contract (sdk) and sdk/kvstream:
// never the server, the host end or the SDK's internals.
package ref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// Broken names a deliberate bug of the reference plugins (env SDKTEST_BROKEN), so that
// the kit's TestKitCatchesBrokenPlugins can check the kit fails where it should.
var Broken = os.Getenv("SDKTEST_BROKEN")

// Backend is a minimal, correct state backend: a map per keyed backend, canonical
// snapshots. It proves the kit can be satisfied.
type Backend struct{}

// PluginInfo implements sdk.Plugin.
func (Backend) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "sdktest-ref", Version: "0.0.1"}
}

// Configure implements sdk.Plugin; it takes no options.
func (Backend) Configure(ctx context.Context, opts sdk.Options) error { return opts.CheckKnown() }

// CreateKeyedStateBackend implements sdk.StateBackend.
func (Backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	if Broken != "range-unchecked" && (p.KeyGroups.Start < 0 || p.KeyGroups.End <= p.KeyGroups.Start) {
		return nil, fmt.Errorf("sdktest-ref: key groups %s: %w", p.KeyGroups, sdk.ErrInvalidArgument)
	}
	return &keyed{p: p, data: make(map[string][]byte)}, nil
}

// errClosed is returned by calls on a closed reference keyed backend.
var errClosed = errors.New("sdktest-ref: keyed backend is closed")

type keyed struct {
	p      sdk.KeyedBackendParams
	mu     sync.Mutex
	data   map[string][]byte
	sorted []string // nil when stale
	closed bool
}

// check fails once the backend is closed; k.mu is held.
func (k *keyed) check() error {
	if k.closed && Broken != "closed-works" {
		return errClosed
	}
	return nil
}

func (k *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.check(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i, key := range keys {
		if v, ok := k.data[string(key)]; ok {
			out[i] = bytes.Clone(v)
			if Broken == "get-shares" {
				out[i] = v
			}
			if out[i] == nil {
				out[i] = []byte{}
			}
		} else if Broken == "absent-empty" {
			out[i] = []byte{}
		}
	}
	return out, nil
}

func (k *keyed) Write(ctx context.Context, muts []sdk.Mutation) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.check(); err != nil {
		return err
	}
	for _, m := range muts {
		if m.Delete {
			delete(k.data, string(m.Key))
		} else {
			k.data[string(m.Key)] = append([]byte{}, m.Value...)
		}
	}
	k.sorted = nil
	return nil
}

func (k *keyed) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.check(); err != nil {
		return nil, err
	}
	if k.sorted == nil {
		k.sorted = make([]string, 0, len(k.data))
		for key := range k.data {
			k.sorted = append(k.sorted, key)
		}
		sort.Strings(k.sorted)
	}
	if limit <= 0 {
		limit = 1000
	}
	if Broken == "scan-limit" {
		limit++
	}
	i := sort.SearchStrings(k.sorted, string(start))
	var out []sdk.KV
	for ; i < len(k.sorted) && len(out) < limit; i++ {
		key := k.sorted[i]
		if end != nil && key >= string(end) {
			break
		}
		out = append(out, sdk.KV{Key: []byte(key), Value: append([]byte{}, k.data[key]...)})
	}
	return out, nil
}

func (k *keyed) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.check(); err != nil {
		return nil, err
	}
	view := k.data
	if Broken != "snapshot-live" {
		view = make(map[string][]byte, len(k.data))
		for key, v := range k.data {
			view[key] = v
		}
	}
	return &snapshot{k: k, view: view}, nil
}

type snapshot struct {
	k    *keyed
	view map[string][]byte
}

func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	s.k.mu.Lock()
	err := s.k.check()
	s.k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	s.k.mu.Lock() // the broken snapshot-live mode shares the live map
	w := kvstream.NewWriter(out)
	for key, v := range s.view {
		if err := w.Write([]byte(key), v); err != nil {
			s.k.mu.Unlock()
			return nil, err
		}
	}
	s.k.mu.Unlock()
	if err := w.Close(); err != nil {
		return nil, err
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		return nil, err
	}
	return []sdk.KeyedStateHandle{{KeyGroups: s.k.p.KeyGroups, Format: sdk.FormatCanonical, Files: []sdk.NamedStateHandle{{Name: "kv", Handle: h}}}}, nil
}

func (s *snapshot) Release() { s.view = nil }

func (k *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	k.mu.Lock()
	err := k.check()
	k.mu.Unlock()
	if err != nil {
		return err
	}
	for _, h := range handles {
		if h.Format != sdk.FormatCanonical {
			return fmt.Errorf("sdktest-ref: format %q: %w", h.Format, sdk.ErrUnsupported)
		}
		for _, f := range h.Files {
			if err := k.restoreFile(ctx, f.Handle, state); err != nil {
				return fmt.Errorf("sdktest-ref: file %q: %w", f.Name, err)
			}
		}
	}
	return nil
}

func (k *keyed) restoreFile(ctx context.Context, h sdk.StreamStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	r := kvstream.NewReader(rc)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sorted = nil
	for {
		key, v, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if k.p.KeyGroups.Contains(sdk.KeyGroupOf(key)) {
			k.data[string(key)] = v
		}
	}
}

func (k *keyed) NotifyCheckpointComplete(ctx context.Context, id int64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.check()
}

func (k *keyed) NotifyCheckpointAborted(ctx context.Context, id int64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.check()
}

func (k *keyed) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	return nil
}

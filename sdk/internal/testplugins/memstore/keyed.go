package memstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// Format is the format of this backend's snapshots.
const Format = "memstore-v1"

type keyed struct {
	params sdk.KeyedBackendParams
	mu     sync.Mutex
	data   map[string][]byte
	closed bool
}

func (k *keyed) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, key := range keys {
		if bytes.Equal(key, PanicKey) {
			panic("memstore: asked to panic")
		}
		if v, ok := k.data[string(key)]; ok {
			out[i] = append([]byte{}, v...)
		}
	}
	return out, nil
}

func (k *keyed) Write(_ context.Context, ms []sdk.Mutation) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range ms {
		if bytes.Equal(m.Key, TooLargeKey) {
			return fmt.Errorf("key %q: %w", m.Key, sdk.ErrStateTooLarge)
		}
		if m.Delete {
			delete(k.data, string(m.Key))
		} else {
			k.data[string(m.Key)] = append([]byte{}, m.Value...)
		}
	}
	return nil
}

func (k *keyed) sortedKeys() []string {
	keys := make([]string, 0, len(k.data))
	for key := range k.data {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func (k *keyed) Scan(_ context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	if limit <= 0 {
		limit = 1000
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []sdk.KV
	for _, key := range k.sortedKeys() {
		if key < string(start) || (end != nil && key >= string(end)) {
			continue
		}
		out = append(out, sdk.KV{Key: []byte(key), Value: append([]byte{}, k.data[key]...)})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

func (k *keyed) Snapshot(_ context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var kvs []sdk.KV
	for _, key := range k.sortedKeys() {
		kvs = append(kvs, sdk.KV{Key: []byte(key), Value: k.data[key]})
	}
	return &snapshot{kvs: kvs, groups: k.params.KeyGroups}, nil
}

// Restore reads every file of every handle, two files at a time, and keeps the keys of its
// own key groups.
func (k *keyed) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	var files []sdk.StreamStateHandle
	for _, h := range handles {
		if h.Format != Format {
			return fmt.Errorf("snapshot format %q: %w", h.Format, sdk.ErrUnsupported)
		}
		for _, f := range h.Files {
			files = append(files, f.Handle)
		}
	}
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = k.restoreFile(ctx, f, state)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (k *keyed) restoreFile(ctx context.Context, h sdk.StreamStateHandle, state sdk.StateReader) error {
	rc, err := state.Open(ctx, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	r := bufio.NewReader(rc)
	for {
		key, err := readBytes(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", h.Ref, err)
		}
		value, err := readBytes(r)
		if err != nil {
			return fmt.Errorf("reading %s: %w", h.Ref, err)
		}
		if k.params.KeyGroups.Contains(sdk.KeyGroupOf(key)) {
			k.mu.Lock()
			k.data[string(key)] = value
			k.mu.Unlock()
		}
	}
}

func (k *keyed) NotifyCheckpointComplete(context.Context, int64) error { return nil }

func (k *keyed) NotifyCheckpointAborted(context.Context, int64) error { return nil }

func (k *keyed) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return errors.New("memstore: keyed backend closed twice")
	}
	k.closed = true
	k.data = nil
	return nil
}

type snapshot struct {
	kvs    []sdk.KV
	groups sdk.KeyGroupRange
}

// Write writes the frozen pairs into two exclusive streams, from two goroutines at once.
func (s *snapshot) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	half := len(s.kvs) / 2
	parts := [][]sdk.KV{s.kvs[:half], s.kvs[half:]}
	files := make([]sdk.NamedStateHandle, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files[i].Name = fmt.Sprintf("part-%d", i)
			files[i].Handle, errs[i] = writePart(ctx, streams, part)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return []sdk.KeyedStateHandle{{KeyGroups: s.groups, Format: Format, Files: files}}, nil
}

func writePart(ctx context.Context, streams sdk.CheckpointStreamFactory, kvs []sdk.KV) (sdk.StreamStateHandle, error) {
	out, err := streams.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	defer out.Close()
	w := bufio.NewWriterSize(out, 64<<10)
	for _, kv := range kvs {
		writeBytes(w, kv.Key)
		writeBytes(w, kv.Value)
	}
	if err := w.Flush(); err != nil {
		return sdk.StreamStateHandle{}, err
	}
	return out.CloseAndGetHandle(ctx)
}

func (s *snapshot) Release() { s.kvs = nil }

func writeBytes(w *bufio.Writer, b []byte) {
	w.Write(binary.AppendUvarint(nil, uint64(len(b))))
	w.Write(b)
}

func readBytes(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("truncated record: %w", sdk.ErrCorrupt)
	}
	return b, nil
}

package sdktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/kvstream"
)

// canonicalFixture is state over every key group, empty values included.
func canonicalFixture() Model {
	m := make(Model)
	for g := 0; g < defaultMaxParallelism; g++ {
		for i := 0; i < 20; i++ {
			m[string(NumberedKey(g, i))] = []byte(fmt.Sprintf("canonical-%d-%d", g, i))
		}
		m[string(StateKey(g, "empty"))] = []byte{}
	}
	return m
}

// canonicalBytes encodes m with sdk/kvstream, in descending key order (the format promises
// no order).
func canonicalBytes(t *testing.T, m Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := kvstream.NewWriter(&buf)
	kvs := m.sorted(nil, nil)
	for i := len(kvs) - 1; i >= 0; i-- {
		if err := w.Write(kvs[i].Key, kvs[i].Value); err != nil {
			t.Fatalf("kvstream Write: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("kvstream Close: %v", err)
	}
	return buf.Bytes()
}

// canonicalHandle stores canonicalBytes of m in streams and returns a FormatCanonical
// handle for key groups r.
func canonicalHandle(t *testing.T, streams *MemoryStreams, r sdk.KeyGroupRange, m Model) sdk.KeyedStateHandle {
	t.Helper()
	return sdk.KeyedStateHandle{
		KeyGroups: r,
		Format:    sdk.FormatCanonical,
		Files:     []sdk.NamedStateHandle{{Name: "state", Handle: streams.Put(sdk.ScopeExclusive, canonicalBytes(t, m))}},
	}
}

// readCanonical decodes every file of canonical handles, keeping the keys in each handle's
// key groups, and fails on a key stored twice.
func readCanonical(t *testing.T, streams *MemoryStreams, handles []sdk.KeyedStateHandle) Model {
	t.Helper()
	m := make(Model)
	for i, h := range handles {
		for _, f := range h.Files {
			rc, err := streams.Open(context.Background(), f.Handle)
			if err != nil {
				t.Fatalf("opening savepoint handle %d file %q: %v", i, f.Name, err)
			}
			r := kvstream.NewReader(rc)
			for {
				k, v, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					rc.Close()
					t.Fatalf("savepoint handle %d file %q is not a valid kvstream: %v", i, f.Name, err)
				}
				if !h.KeyGroups.Contains(sdk.KeyGroupOf(k)) {
					t.Errorf("savepoint handle %d (key groups %s) file %q holds key %x of key group %d", i, h.KeyGroups, f.Name, k, sdk.KeyGroupOf(k))
					continue
				}
				if _, dup := m[string(k)]; dup {
					t.Errorf("savepoint stores key %x twice", k)
				}
				m[string(k)] = v
			}
			rc.Close()
		}
	}
	return m
}

func savepointChecks(t *testing.T, factory BackendFactory) {
	p := fullParams("savepoint")
	kb := OpenKeyed(t, factory(t), p)
	m := make(Model)
	Fill(t, kb, m, p.KeyGroups, 5000, "v1")
	MustWrite(t, kb, m, []sdk.Mutation{{Key: StateKey(9, "empty"), Value: []byte{}}})
	streams := NewMemoryStreams()
	opts := sdk.SnapshotOptions{CheckpointID: 3, Savepoint: true}
	handles := TakeSnapshot(t, kb, p, opts, streams)

	t.Run("FormatIsCanonical", func(t *testing.T) {
		if len(handles) == 0 {
			t.Fatalf("savepoint of a non-empty backend returned no handles")
		}
		for i, h := range handles {
			if h.Format != sdk.FormatCanonical {
				t.Errorf("savepoint handle %d has Format %q, want %q", i, h.Format, sdk.FormatCanonical)
			}
		}
	})
	t.Run("OnlyExclusiveStreams", func(t *testing.T) {
		for i, s := range streams.Scopes() {
			if s != sdk.ScopeExclusive {
				t.Errorf("savepoint opened stream %d with scope %s, want exclusive only", i, s)
			}
		}
		for i, h := range handles {
			for _, f := range h.Files {
				if f.Handle.Scope != sdk.ScopeExclusive {
					t.Errorf("savepoint handle %d file %q has scope %s, want exclusive", i, f.Name, f.Handle.Scope)
				}
			}
		}
	})
	t.Run("FilesAreKVStreamsOfTheState", func(t *testing.T) {
		if d := diffKVs(readCanonical(t, streams, handles).sorted(nil, nil), m.sorted(nil, nil)); d != "" {
			t.Fatalf("records of the savepoint's kvstreams differ from the state: %s", d)
		}
	})
	t.Run("RestoresIntoFreshBackend", func(t *testing.T) {
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
	t.Run("RestoresRescaled", func(t *testing.T) {
		q := Params("savepoint", 0, 2)
		CheckContents(t, restoreFresh(t, factory, q, handles, streams), m.Within(q.KeyGroups))
	})
	t.Run("BackendKeepsWorkingAfterSavepoint", func(t *testing.T) {
		churn(t, kb, m, p.KeyGroups, 100, "v2")
		CheckContents(t, kb, m)
	})
}

func notifyChecks(t *testing.T, factory BackendFactory) {
	t.Run("CompleteAndAbortedAccepted", func(t *testing.T) {
		p := fullParams("notify")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 500, "v1")
		ctx := context.Background()
		streams := NewMemoryStreams()
		TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		if err := kb.NotifyCheckpointComplete(ctx, 1); err != nil {
			t.Fatalf("NotifyCheckpointComplete(1): %v", err)
		}
		TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 2}, streams)
		if err := kb.NotifyCheckpointAborted(ctx, 2); err != nil {
			t.Fatalf("NotifyCheckpointAborted(2) after Write: %v", err)
		}
		startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 3}).Release()
		if err := kb.NotifyCheckpointAborted(ctx, 3); err != nil {
			t.Fatalf("NotifyCheckpointAborted(3) after Release without Write: %v", err)
		}
		churn(t, kb, m, p.KeyGroups, 50, "v2")
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 4}, streams)
		if err := kb.NotifyCheckpointComplete(ctx, 4); err != nil {
			t.Fatalf("NotifyCheckpointComplete(4): %v", err)
		}
		CheckContents(t, kb, m)
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
}

// largeStateKeys is the size of the large-state round trip.
const largeStateKeys = 200000

func largeStateCheck(t *testing.T, factory BackendFactory) {
	p := fullParams("large")
	kb := OpenKeyed(t, factory(t), p)
	m := make(Model)
	start := time.Now()
	Fill(t, kb, m, p.KeyGroups, largeStateKeys, "large-state-value")
	t.Logf("wrote %d keys in %v", len(m), time.Since(start).Round(time.Millisecond))
	for _, savepoint := range []bool{false, true} {
		name := "Checkpoint"
		if savepoint {
			name = "Savepoint"
		}
		t.Run(name+"RoundTrip", func(t *testing.T) {
			streams := NewMemoryStreams()
			start := time.Now()
			handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: savepoint}, streams)
			took := time.Since(start)
			start = time.Now()
			restored := restoreFresh(t, factory, p, handles, streams)
			t.Logf("%s of %d keys: %d streams, %.1f MB, written in %v, restored in %v", name, len(m), streams.Len(), float64(streams.Size())/1e6, took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			CheckContents(t, restored, m)
		})
	}
}

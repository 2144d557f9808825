package host_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// orderedBackend records the order of its writes and fails the one numbered failAt.
type orderedBackend struct {
	sdk.KeyedStateBackend
	mu     sync.Mutex
	writes []string
	failAt int
	vals   map[string][]byte
}

func (b *orderedBackend) Write(_ context.Context, muts []sdk.Mutation) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes = append(b.writes, string(muts[0].Key))
	if len(b.writes) == b.failAt {
		return errors.New("disk on fire")
	}
	for _, m := range muts {
		b.vals[string(m.Key)] = m.Value
	}
	return nil
}

func (b *orderedBackend) Get(_ context.Context, keys [][]byte) ([][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = b.vals[string(k)]
	}
	return out, nil
}

// TestLocalPipeline: writes apply in the order they started; a read sees the writes it
// waited for; once a write fails, nothing after it is applied and every later write
// reports the failure.
func TestLocalPipeline(t *testing.T) {
	ctx := context.Background()
	kb := &orderedBackend{vals: map[string][]byte{}, failAt: 4}
	p := host.LocalPipeline(kb)
	var waits []func() error
	for i := range 6 {
		k := fmt.Sprintf("k%d", i)
		waits = append(waits, p.StartWrite(ctx, []sdk.Mutation{{Key: []byte(k), Value: []byte(k)}}))
		if i == 1 {
			if err := waits[1](); err != nil {
				t.Fatalf("write 1: %v", err)
			}
			vals, err := p.StartRead(ctx, [][]byte{[]byte("k0"), []byte("k1")})()
			if err != nil || string(vals[0]) != "k0" || string(vals[1]) != "k1" {
				t.Fatalf("read after writes 0 and 1: %q, %v", vals, err)
			}
		}
	}
	for i, wait := range waits {
		err := wait()
		if (i < 3) != (err == nil) {
			t.Fatalf("write %d: %v; want writes 0-2 to succeed and the rest to fail", i, err)
		}
	}
	if want := []string{"k0", "k1", "k2", "k3"}; fmt.Sprint(kb.writes) != fmt.Sprint(want) {
		t.Fatalf("the backend saw writes %v, want %v: in order, none after the failed one", kb.writes, want)
	}
}

func TestChecksumIsCRC32C(t *testing.T) {
	data := []byte("state")
	want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	h := host.NewChecksum()
	h.Write(data[:2])
	h.Write(data[2:])
	if host.Checksum(data) != want || h.Sum32() != want {
		t.Fatalf("Checksum %08x, NewChecksum %08x; want CRC-32C %08x", host.Checksum(data), h.Sum32(), want)
	}
}

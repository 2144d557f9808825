package boltstate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
)

// workingMmapSize is the initial memory map of a working file. bbolt remaps a growing file
// only when no read transaction is open, so a Write that grows the file past its map waits
// for open snapshots; a large virtual map (no memory is used until pages are touched) makes
// that rare.
const workingMmapSize = 1 << 30

// defaultScanPage is the page size of Scan when the caller gives no limit.
const defaultScanPage = 1024

// bucketKV is the one bucket of a working file: the keyed backend's state keys and values.
var bucketKV = []byte("kv")

// keyed is one operator subtask's working state, in a bbolt file of its own.
type keyed struct {
	params sdk.KeyedBackendParams
	name   string // for messages: "boltdb job/operator#subtask"
	dir    string // holds the working file; removed by Close
	db     *bolt.DB

	mu     sync.Mutex
	closed bool
	snaps  map[*snapshot]struct{} // snapshots not yet released
}

var _ sdk.KeyedStateBackend = (*keyed)(nil)

// CreateKeyedStateBackend creates an empty working file for one operator subtask under the
// local directory.
func (p *Plugin) CreateKeyedStateBackend(ctx context.Context, params sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	name := fmt.Sprintf("boltdb %s/%s#%d", params.JobID, params.OperatorID, params.Subtask)
	if params.KeyGroups.Start < 0 || params.KeyGroups.End <= params.KeyGroups.Start {
		return nil, fmt.Errorf("%s: invalid key group range %s: %w", name, params.KeyGroups, sdk.ErrInvalidArgument)
	}
	localDir := p.config().localDir
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: local directory (option %q): %w", name, OptionLocalDir, err)
	}
	dir, err := os.MkdirTemp(localDir, fileSafe(params.JobID)+"-"+fileSafe(params.OperatorID)+"-"+strconv.Itoa(params.Subtask)+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: working directory under %s: %w", name, localDir, err)
	}
	db, err := bolt.Open(filepath.Join(dir, "state.db"), 0o600, &bolt.Options{
		NoSync:          true, // working state is not durable: checkpoints are
		NoFreelistSync:  true,
		NoGrowSync:      true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: workingMmapSize,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: open working file in %s: %w", name, dir, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucketKV); return err }); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: create bucket: %w", name, err)
	}
	return &keyed{params: params, name: name, dir: dir, db: db, snaps: map[*snapshot]struct{}{}}, nil
}

// fileSafe keeps the letters, digits, '-' and '_' of s, for a file name.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if len(s) > 32 {
		s = s[:32]
	}
	return s
}

// check fails once the backend is closed.
func (kb *keyed) check() error {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.closed {
		return fmt.Errorf("%s: keyed backend is closed", kb.name)
	}
	return nil
}

// Get reads keys in one read transaction; values are copies.
func (kb *keyed) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	values := make([][]byte, len(keys))
	err := kb.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		for i, k := range keys {
			if v := b.Get(k); v != nil {
				values[i] = append(make([]byte, 0, len(v)), v...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: get %d keys: %w", kb.name, len(keys), err)
	}
	return values, nil
}

// Write applies mutations in order, in one transaction.
func (kb *keyed) Write(ctx context.Context, mutations []sdk.Mutation) error {
	if err := kb.check(); err != nil {
		return err
	}
	err := kb.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		for _, m := range mutations {
			if len(m.Key) == 0 {
				return fmt.Errorf("empty key: %w", sdk.ErrInvalidArgument)
			}
			if m.Delete {
				if err := b.Delete(m.Key); err != nil {
					return fmt.Errorf("delete key %x: %w", m.Key, err)
				}
				continue
			}
			v := m.Value
			if v == nil {
				v = []byte{} // present and empty, never absent
			}
			if err := b.Put(m.Key, v); err != nil {
				return fmt.Errorf("put key %x: %w", m.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: write %d mutations: %w", kb.name, len(mutations), err)
	}
	return nil
}

// Scan returns up to limit pairs of [start, end) in key order.
func (kb *keyed) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	if err := kb.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultScanPage
	}
	var out []sdk.KV
	err := kb.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketKV).Cursor()
		k, v := c.First()
		if len(start) > 0 {
			k, v = c.Seek(start)
		}
		for ; k != nil && len(out) < limit; k, v = c.Next() {
			if end != nil && bytes.Compare(k, end) >= 0 {
				break
			}
			out = append(out, sdk.KV{Key: bytes.Clone(k), Value: append(make([]byte, 0, len(v)), v...)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: scan: %w", kb.name, err)
	}
	return out, nil
}

// NotifyCheckpointComplete does nothing: full snapshots keep no state between checkpoints.
func (kb *keyed) NotifyCheckpointComplete(ctx context.Context, id int64) error { return kb.check() }

// NotifyCheckpointAborted does nothing, for the same reason.
func (kb *keyed) NotifyCheckpointAborted(ctx context.Context, id int64) error { return kb.check() }

// Close ends the snapshots still open, closes the working file and deletes it.
func (kb *keyed) Close() error {
	kb.mu.Lock()
	if kb.closed {
		kb.mu.Unlock()
		return nil
	}
	kb.closed = true
	snaps := kb.snaps
	kb.snaps = nil
	kb.mu.Unlock()
	for s := range snaps {
		s.abort()
	}
	err := kb.db.Close()
	if rerr := os.RemoveAll(kb.dir); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("%s: close: %w", kb.name, err)
	}
	return nil
}

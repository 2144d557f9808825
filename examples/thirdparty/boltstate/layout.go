package boltstate

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Layout of a checkpoint file (a job's checkpoints.db or a savepoint's savepoint.db):
//
//	checkpoints/<id>/state/<seq>/<chunk>  exclusive state streams of checkpoint id
//	checkpoints/<id>/meta/<chunk>         its metadata, once complete
//	checkpoints/<id>/done                 completion mark: finalize time and metadata size
//	shared/<seq>/<chunk>                  shared state streams
//
// Ids and sequence numbers are big-endian uint64 (so buckets iterate oldest first), chunk
// numbers big-endian uint32. A stream is a bucket of chunks of at most chunkSize bytes.
var (
	bucketCheckpoints = []byte("checkpoints")
	bucketShared      = []byte("shared")
	bucketState       = []byte("state")
	bucketMeta        = []byte("meta")
	keyDone           = []byte("done")
)

// File and directory names.
const (
	jobFileName       = "checkpoints.db"
	savepointFileName = "savepoint.db"
)

// chunkSize is the largest value a stream's chunk holds.
const chunkSize = 1 << 20

// createRoots creates the root buckets of a checkpoint file.
func createRoots(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketCheckpoints, bucketShared} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
func u32(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// checkpointBucket returns the bucket of checkpoint id, nil when it does not exist.
func checkpointBucket(tx *bolt.Tx, id int64) *bolt.Bucket {
	root := tx.Bucket(bucketCheckpoints)
	if root == nil {
		return nil
	}
	return root.Bucket(u64(uint64(id)))
}

// doneMark is the value of a complete checkpoint's done key.
type doneMark struct {
	time     time.Time
	metaSize int64
}

func (d doneMark) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(d.time.UnixNano()))
	return binary.BigEndian.AppendUint64(b, uint64(d.metaSize))
}

// completion returns the done mark of checkpoint bucket b; ok is false while it is not
// complete.
func completion(b *bolt.Bucket) (d doneMark, ok bool, err error) {
	v := b.Get(keyDone)
	if v == nil {
		return doneMark{}, false, nil
	}
	if len(v) != 16 {
		return doneMark{}, false, fmt.Errorf("completion mark of %d bytes, want 16: %w", len(v), sdk.ErrCorrupt)
	}
	return doneMark{
		time:     time.Unix(0, int64(binary.BigEndian.Uint64(v))),
		metaSize: int64(binary.BigEndian.Uint64(v[8:])),
	}, true, nil
}

// streamRef locates a stream in a checkpoint file. Its string form, the Ref of its
// handles, is "<file>#shared/<seq>", "<file>#<id>/<seq>" or "<file>#<id>/meta".
type streamRef struct {
	file   string
	shared bool
	id     int64  // checkpoint id, unless shared
	meta   bool   // the checkpoint's metadata
	seq    uint64 // stream number, unless meta
}

func (r streamRef) String() string {
	switch {
	case r.shared:
		return fmt.Sprintf("%s#shared/%d", r.file, r.seq)
	case r.meta:
		return fmt.Sprintf("%s#%d/meta", r.file, r.id)
	default:
		return fmt.Sprintf("%s#%d/%d", r.file, r.id, r.seq)
	}
}

// parseRef parses the Ref of a handle this plugin wrote.
func parseRef(s string) (streamRef, error) {
	bad := func(why string) (streamRef, error) {
		return streamRef{}, fmt.Errorf("state handle %q: %s: %w", s, why, sdk.ErrInvalidArgument)
	}
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return bad("not a boltdb state handle (want FILE#PATH)")
	}
	r := streamRef{file: s[:i]}
	if !filepath.IsAbs(r.file) {
		return bad("file is not an absolute path")
	}
	first, second, ok := strings.Cut(s[i+1:], "/")
	if !ok {
		return bad("path has no '/'")
	}
	if first == "shared" {
		r.shared = true
	} else {
		id, err := strconv.ParseInt(first, 10, 64)
		if err != nil || id < 0 {
			return bad("bad checkpoint id")
		}
		r.id = id
	}
	if second == "meta" && !r.shared {
		r.meta = true
		return r, nil
	}
	seq, err := strconv.ParseUint(second, 10, 64)
	if err != nil || seq == 0 {
		return bad("bad stream number")
	}
	r.seq = seq
	return r, nil
}

// bucket returns the stream's bucket in tx, nil when it does not exist.
func (r streamRef) bucket(tx *bolt.Tx) *bolt.Bucket {
	if r.shared {
		if root := tx.Bucket(bucketShared); root != nil {
			return root.Bucket(u64(r.seq))
		}
		return nil
	}
	cb := checkpointBucket(tx, r.id)
	if cb == nil {
		return nil
	}
	if r.meta {
		return cb.Bucket(bucketMeta)
	}
	if st := cb.Bucket(bucketState); st != nil {
		return st.Bucket(u64(r.seq))
	}
	return nil
}

// parent returns the bucket the stream's bucket lives in, nil when it does not exist.
func (r streamRef) parent(tx *bolt.Tx) *bolt.Bucket {
	if r.shared {
		return tx.Bucket(bucketShared)
	}
	cb := checkpointBucket(tx, r.id)
	if cb == nil || r.meta {
		return cb
	}
	return cb.Bucket(bucketState)
}

// key returns the stream bucket's key in its parent.
func (r streamRef) key() []byte {
	if r.meta {
		return bucketMeta
	}
	return u64(r.seq)
}

// pointer is a resolved external pointer: checkpoint id in a checkpoint file.
type pointer struct {
	external  string // the pointer users pass
	file      string
	id        int64 // 0 for a savepoint: its only checkpoint
	savepoint bool
}

// checkpointPointer returns the pointer of checkpoint id of the job whose file is file.
func checkpointPointer(file string, id int64) string {
	return filepath.Join(filepath.Dir(file), layout.CheckpointDir(id))
}

// parsePointer interprets an external pointer: <dir>/<job>/chk-N (or the job's file), a
// savepoint directory or its savepoint.db. It does not check that anything exists.
func parsePointer(external string) (pointer, error) {
	p, err := layout.LocalPath(external)
	if err != nil {
		return pointer{}, fmt.Errorf("checkpoint pointer %q: %w", external, err)
	}
	base := filepath.Base(p)
	if id, ok := layout.ParseCheckpointDir(base); ok {
		return pointer{external: p, file: filepath.Join(filepath.Dir(p), jobFileName), id: id}, nil
	}
	if base == savepointFileName {
		return pointer{external: filepath.Dir(p), file: p, savepoint: true}, nil
	}
	return pointer{external: p, file: filepath.Join(p, savepointFileName), savepoint: true}, nil
}

package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/sdk"
)

// KVLease is an sdk.LeaseStore on one key of a NATS KV bucket: the record a runner's lease
// (runtime/ownership) is built on, kept in a replicated engine rather than beside the
// checkpoints. Its version is the key's revision (the bucket stream's sequence of the
// last write), so it is also a fencing token that only grows.
//
// The guarantees sdk.LeaseStore asks for come from JetStream: a write is one message,
// whole; Create and Update are compare-and-swaps on the key's last revision, which the
// stream's leader enforces (of racing writers at one revision, one wins); a write is
// acknowledged once the stream's replicas hold it (a quorum of an R3 bucket). Reads go to
// the stream's leader (ReadLease), so a read that starts after a write returned sees it.
type KVLease struct {
	kv      jetstream.KeyValue
	nc      *nats.Conn
	get     string // the API subject of a message get from the bucket's stream leader
	bucket  string
	key     string
	subject string // the key's subject in the bucket's stream
}

// kvOpHeader is the header in which a KV bucket marks a delete or purge of a key.
const kvOpHeader = "KV-Operation"

// OpenKVLease returns the lease record on key of bucket, which must exist with replicas
// replicas (0: any number): a bucket that is missing or replicated otherwise than
// configured is refused, naming it, since a lease on a bucket that loses its only copy
// with one server would let two runners hold it.
func OpenKVLease(ctx context.Context, js jetstream.JetStream, bucket, key string, replicas int) (*KVLease, error) {
	if !validKVKey(key) {
		return nil, fmt.Errorf("KV bucket %s: %q is not a valid key (letters, digits and -_/=. only, not starting or ending in a dot)", bucket, key)
	}
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("KV bucket %s does not exist: create it (nats kv add %s --replicas %d): %w", bucket, bucket, max(replicas, 1), err)
	}
	if err != nil {
		return nil, fmt.Errorf("KV bucket %s: %w", bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("KV bucket %s: status: %w", bucket, err)
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return nil, fmt.Errorf("KV bucket %s: status of type %T, not a JetStream bucket's", bucket, st)
	}
	info := bs.StreamInfo()
	if replicas > 0 && info.Config.Replicas != replicas {
		return nil, fmt.Errorf("KV bucket %s has %d replicas, the configuration asks for %d", bucket, info.Config.Replicas, replicas)
	}
	return &KVLease{kv: kv, nc: js.Conn(), get: "$JS.API.STREAM.MSG.GET." + info.Config.Name,
		bucket: bucket, key: key, subject: "$KV." + bucket + "." + key}, nil
}

// validKVKey reports whether key is a key a KV bucket accepts.
func validKVKey(key string) bool {
	if key == "" || key[0] == '.' || key[len(key)-1] == '.' {
		return false
	}
	for _, c := range key {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '/', c == '=', c == '.':
		default:
			return false
		}
	}
	return true
}

// what names the record in errors.
func (l *KVLease) what() string { return fmt.Sprintf("lease %s of KV bucket %s", l.key, l.bucket) }

// ReadLease implements sdk.LeaseStore, reading from the bucket stream's leader
// (LeaderGet).
func (l *KVLease) ReadLease(ctx context.Context) (sdk.LeaseRecord, error) {
	e, err := leaderGet(ctx, l.nc, l.get, l.subject)
	if err != nil {
		return sdk.LeaseRecord{}, fmt.Errorf("%s: %w", l.what(), err)
	}
	return sdk.LeaseRecord{Data: e.Value, Version: strconv.FormatUint(e.Revision, 10)}, nil
}

// Stored returns the time the NATS server stored the record's last write, by the
// server's clock.
func (l *KVLease) Stored(ctx context.Context) (time.Time, error) {
	e, err := leaderGet(ctx, l.nc, l.get, l.subject)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", l.what(), err)
	}
	return e.Stored, nil
}

// leaderGetTimeout bounds a LeaderGet whose context has no deadline.
const leaderGetTimeout = 10 * time.Second

// KVEntry is the last value of a key of a KV bucket, as LeaderGet reads it.
type KVEntry struct {
	Value    []byte
	Revision uint64
	// Stored is when the server stored it, by the server's clock.
	Stored time.Time
}

// LeaderGet reads the last value of key in bucket from the bucket stream's leader, with
// the stream's message-get API: nats.go's KV Get and the stream's GetLastMsgForSubject use
// a direct get instead when the stream allows it (KV buckets do), which any replica may
// answer from behind the leader, so that a key written a moment ago may read as missing
// or old. A read through LeaderGet that starts after a write returned sees it. A key that
// was never written, or was deleted or purged last, is sdk.ErrNotFound.
func LeaderGet(ctx context.Context, js jetstream.JetStream, bucket, key string) (KVEntry, error) {
	e, err := leaderGet(ctx, js.Conn(), "$JS.API.STREAM.MSG.GET.KV_"+bucket, "$KV."+bucket+"."+key)
	if err != nil {
		return KVEntry{}, fmt.Errorf("key %s of KV bucket %s: %w", key, bucket, err)
	}
	return e, nil
}

func leaderGet(ctx context.Context, nc *nats.Conn, api, subject string) (KVEntry, error) {
	if _, ok := ctx.Deadline(); !ok { // a request nobody answers would wait for ever
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(struct {
		LastBySubject string `json:"last_by_subj"`
	}{subject})
	resp, err := nc.RequestWithContext(ctx, api, req)
	if err != nil {
		return KVEntry{}, fmt.Errorf("read: %w", err)
	}
	var r struct {
		Message *struct {
			Seq    uint64    `json:"seq"`
			Header []byte    `json:"hdrs"`
			Data   []byte    `json:"data"`
			Time   time.Time `json:"time"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return KVEntry{}, fmt.Errorf("read: the server's answer does not decode: %w", err)
	}
	switch {
	case r.Error != nil && r.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return KVEntry{}, sdk.ErrNotFound
	case r.Error != nil:
		return KVEntry{}, fmt.Errorf("read: %w", r.Error)
	case r.Message == nil:
		return KVEntry{}, fmt.Errorf("read: the server's answer holds no message")
	}
	if len(r.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(r.Message.Header)
		if err != nil {
			return KVEntry{}, fmt.Errorf("read: headers of revision %d: %w", r.Message.Seq, err)
		}
		if op := h.Get(kvOpHeader); op != "" {
			return KVEntry{}, fmt.Errorf("deleted (%s at revision %d): %w", op, r.Message.Seq, sdk.ErrNotFound)
		}
	}
	return KVEntry{Value: r.Message.Data, Revision: r.Message.Seq, Stored: r.Message.Time}, nil
}

// WriteLease implements sdk.LeaseStore.
func (l *KVLease) WriteLease(ctx context.Context, data []byte, ifVersion string) (string, error) {
	if len(data) > sdk.MaxLeaseSize {
		return "", fmt.Errorf("%s: a record of %d bytes is over %d", l.what(), len(data), sdk.MaxLeaseSize)
	}
	var rev uint64
	var err error
	if ifVersion == "" {
		rev, err = l.kv.Create(ctx, l.key, data)
	} else {
		prev, perr := strconv.ParseUint(ifVersion, 10, 64)
		if perr != nil || prev == 0 {
			return "", fmt.Errorf("%s: version %q is no revision of this bucket: %w", l.what(), ifVersion, sdk.ErrConflict)
		}
		rev, err = l.kv.Update(ctx, l.key, data, prev)
	}
	if casConflict(err) {
		return "", fmt.Errorf("%s: %w (%w)", l.what(), sdk.ErrConflict, err)
	}
	if err != nil {
		return "", fmt.Errorf("%s: write: %w", l.what(), err)
	}
	return strconv.FormatUint(rev, 10), nil
}

// casConflict reports whether err is a KV compare-and-swap that found another revision:
// a create of a key that exists, or an update at a revision that is not the last.
func casConflict(err error) bool {
	return err != nil && (errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch))
}

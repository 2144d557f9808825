package disaggregated

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// The test S3 server's fixed credentials (scripts/s3server.sh).
const (
	testS3AccessKey = "testkey"
	testS3SecretKey = "testsecret12345"
)

// testStore is a remote store for a test: the options that reach it (remote and, for S3,
// the s3.* options), which several backends of one test share.
type testStore sdk.Options

// uri returns the store's URI.
func (s testStore) uri() string { return s[OptionRemote] }

// s3Options returns the s3.* options among the store's.
func (s testStore) s3Options() sdk.Options {
	out := sdk.Options{}
	for k, v := range s {
		if k != OptionRemote {
			out[k] = v
		}
	}
	return out
}

// open opens the store as the backend does.
func (s testStore) open(t *testing.T) Remote {
	t.Helper()
	r, err := openRemote(context.Background(), s.uri(), s.s3Options())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fileTestStore returns a store in a fresh directory.
func fileTestStore(t *testing.T) testStore {
	return testStore{OptionRemote: "file://" + filepath.Join(t.TempDir(), "remote")}
}

// s3TestStore returns a store below a fresh random prefix of a bucket made for t on the
// test S3 server (see s3TestBucket).
func s3TestStore(t *testing.T) testStore {
	bucket, opts := s3TestBucket(t)
	opts[OptionRemote] = "s3://" + bucket + "/" + randomSuffix() + "/tables"
	return testStore(opts)
}

// s3TestBucket returns a fresh bucket on the test S3 server and the s3.* options that reach
// it; the bucket is emptied and removed when t ends. The server is the one
// FLOWSTATE_S3_ENDPOINT names (scripts/with-s3.sh starts one): without it the test skips,
// except under CI, which always starts one, where it fails.
func s3TestBucket(t *testing.T) (string, sdk.Options) {
	t.Helper()
	endpoint := os.Getenv("FLOWSTATE_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("FLOWSTATE_S3_ENDPOINT is not set but CI is: the S3 tests must run in CI (scripts/with-s3.sh)")
		}
		t.Skip("no S3 server: set FLOWSTATE_S3_ENDPOINT (scripts/with-s3.sh go test ...)")
	}
	host, ok := strings.CutPrefix(endpoint, "http://")
	if !ok {
		t.Fatalf("FLOWSTATE_S3_ENDPOINT %q: want http://host:port", endpoint)
	}
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(testS3AccessKey, testS3SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	bucket := "disagg-" + hex.EncodeToString(b)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
			c.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{})
		}
		c.RemoveBucket(ctx, bucket)
	})
	return bucket, sdk.Options{OptionS3Endpoint: endpoint, OptionS3Region: "us-east-1", OptionS3PathStyle: "true",
		OptionS3AccessKey: testS3AccessKey, OptionS3SecretKey: testS3SecretKey}
}

// adoptingStreams are MemoryStreams whose checkpoint storage takes over the objects of one
// remote store in place (sdk.RemoteFileAdopter), as fsstorage does for files on the medium
// of its checkpoint directory: an object of the store that exists with its size is
// adopted under its URI, and Open reads it there. Objects of other stores are refused
// with sdk.ErrUnsupported.
type adoptingStreams struct {
	*sdktest.MemoryStreams
	remote Remote
	mu     sync.Mutex
	refs   map[string]string // adopted ref -> object name
}

func newAdoptingStreams(t *testing.T, remote testStore) *adoptingStreams {
	return &adoptingStreams{MemoryStreams: sdktest.NewMemoryStreams(), remote: remote.open(t), refs: map[string]string{}}
}

func (a *adoptingStreams) AdoptRemoteFiles(ctx context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	out := make([]sdk.StreamStateHandle, len(files))
	for i, f := range files {
		name, ok := strings.CutPrefix(f.Ref, a.remote.String()+"/")
		if !ok {
			return nil, fmt.Errorf("adopt %s: not on %s: %w", f.Ref, a.remote, sdk.ErrUnsupported)
		}
		if n, err := a.remote.Size(ctx, name); err != nil || n != f.Size {
			return nil, fmt.Errorf("adopt %s: %d bytes, %v: %w", f.Ref, n, err, sdk.ErrUnsupported)
		}
		a.mu.Lock()
		a.refs[f.Ref] = name
		a.mu.Unlock()
		out[i] = sdk.StreamStateHandle{Ref: f.Ref, Size: f.Size, Scope: sdk.ScopeShared, Checksum: f.Checksum}
	}
	return out, nil
}

func (a *adoptingStreams) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	a.mu.Lock()
	name, ok := a.refs[h.Ref]
	a.mu.Unlock()
	if !ok {
		return a.MemoryStreams.Open(ctx, h)
	}
	rc, err := a.remote.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return sdktest.NewVerifyingReader(rc, h), nil
}

// snapshotTo takes a snapshot of kb with opts and writes it to streams
// (sdktest.TakeSnapshot, with kb's own parameters).
func snapshotTo(t *testing.T, kb sdk.KeyedStateBackend, opts sdk.SnapshotOptions, streams sdktest.SnapshotStreams) []sdk.KeyedStateHandle {
	t.Helper()
	return sdktest.TakeSnapshot(t, kb, kb.(*keyed).params, opts, streams)
}

package disaggregated

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/flowstate/flowstate/sdk"
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

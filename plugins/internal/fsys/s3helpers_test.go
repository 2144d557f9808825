package fsys

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/minio/minio-go/v7"
)

// Environment of the S3 tests. scripts/s3server.sh starts a server with the default
// credentials; `make test` exports the endpoint.
const (
	envS3Endpoint  = "FLOWSTATE_S3_ENDPOINT"
	envS3AccessKey = "FLOWSTATE_S3_ACCESS_KEY"
	envS3SecretKey = "FLOWSTATE_S3_SECRET_KEY"
)

// s3TestOptions returns the options of the test server, skipping the test when no server
// is configured, except under CI where that is a failure.
func s3TestOptions(t *testing.T) sdk.Options {
	t.Helper()
	endpoint := os.Getenv(envS3Endpoint)
	if endpoint == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set but CI=true: the S3 tests must run in CI (start a server with scripts/s3server.sh start, or run make test)", envS3Endpoint)
		}
		t.Skipf("no S3 server: set %s (scripts/s3server.sh build && scripts/s3server.sh start prints it) to run the S3 tests", envS3Endpoint)
	}
	return sdk.Options{
		OptionS3Endpoint:  endpoint,
		OptionS3AccessKey: envOr(envS3AccessKey, "testkey"),
		OptionS3SecretKey: envOr(envS3SecretKey, "testsecret12345"),
		OptionS3Region:    "us-east-1",
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// newTestS3 returns an S3 file system on the test server and a fresh bucket that is
// emptied and removed when t ends.
func newTestS3(t *testing.T, extra sdk.Options) (*S3, string) {
	t.Helper()
	opts := s3TestOptions(t)
	for k, v := range extra {
		opts[k] = v
	}
	cfg, err := S3ConfigFromOptions(opts, func(string) string { return "" })
	if err != nil {
		t.Fatalf("S3ConfigFromOptions: %v", err)
	}
	s, err := NewS3(cfg)
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	bucket := "fsys-" + randomSuffix(t)
	ctx := context.Background()
	if err := s.core.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() { removeBucket(t, s, bucket) })
	return s, bucket
}

// removeBucket deletes every object and unfinished upload of bucket, then the bucket.
func removeBucket(t *testing.T, s *S3, bucket string) {
	ctx := context.Background()
	for o := range s.core.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err == nil {
			s.core.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{})
		}
	}
	if res, err := s.core.ListMultipartUploads(ctx, bucket, "", "", "", "", 1000); err == nil {
		for _, u := range res.Uploads {
			s.core.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID)
		}
	}
	if err := s.core.RemoveBucket(ctx, bucket); err != nil {
		t.Logf("remove bucket %s: %v", bucket, err)
	}
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// testData returns n deterministic bytes that differ by seed.
func testData(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 12345
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// writeFile creates name, writes data in chunks of chunk bytes and syncs and closes it.
func writeFile(fsys FS, name string, data []byte, chunk int) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	for off := 0; off < len(data); off += chunk {
		if _, err := f.Write(data[off:min(off+chunk, len(data))]); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// mustWrite is writeFile failing the test.
func mustWrite(t *testing.T, fsys FS, name string, data []byte) {
	t.Helper()
	if err := writeFile(fsys, name, data, 32<<10); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

// readAll reads name back.
func readAll(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	r, err := fsys.Open(name)
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

// checkContent asserts name holds want.
func checkContent(t *testing.T, fsys FS, name string, want []byte) {
	t.Helper()
	if got := readAll(t, fsys, name); !bytes.Equal(got, want) {
		t.Fatalf("%s: read back %d bytes that differ from the %d written", name, len(got), len(want))
	}
}

// checkNotExist asserts that err wraps fs.ErrNotExist.
func checkNotExist(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: got error %v, want one wrapping fs.ErrNotExist", what, err)
	}
}

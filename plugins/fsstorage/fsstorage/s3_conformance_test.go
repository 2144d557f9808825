package fsstorage_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Bucket returns the test server's options and a fresh bucket, emptied and removed when
// t ends. It skips without a server, except under CI.
func s3Bucket(t *testing.T) (sdk.Options, string) {
	t.Helper()
	endpoint := os.Getenv("FLOWSTATE_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLOWSTATE_S3_ENDPOINT is not set but CI=true: the S3 tests must run in CI")
		}
		t.Skip("no S3 server: set FLOWSTATE_S3_ENDPOINT (scripts/s3server.sh start)")
	}
	opts := sdk.Options{"s3.endpoint": endpoint, "s3.access-key": "testkey", "s3.secret-key": "testsecret12345", "s3.region": "us-east-1"}
	c, err := minio.New(endpoint[len("http://"):], &minio.Options{Creds: credentials.NewStaticV4("testkey", "testsecret12345", ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	bucket := "conf-" + hex.EncodeToString(b)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
			c.RemoveObject(ctx, bucket, o.Key, minio.RemoveObjectOptions{})
		}
		c.RemoveBucket(ctx, bucket)
	})
	return opts, bucket
}

func TestConformanceS3(t *testing.T) {
	for name, extra := range map[string]sdk.Options{
		"defaults":                     {},
		"no-inline-with-savepoint-dir": {sdk.OptionDataInlineThreshold: "0", sdk.OptionSavepointDir: "savepoints"},
	} {
		t.Run(name, func(t *testing.T) {
			sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				opts, bucket := s3Bucket(t)
				opts[sdk.OptionCheckpointDir] = "s3://" + bucket + "/checkpoints"
				for k, v := range extra {
					if k == sdk.OptionSavepointDir {
						v = "s3://" + bucket + "/" + v
					}
					opts[k] = v
				}
				s := fsstorage.New()
				if err := s.Configure(context.Background(), opts); err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return s
			})
		})
	}
}

// TestTwoWritersOfOneCheckpointS3: two writers of one checkpoint on S3 (SeaweedFS):
// publishing _metadata is a copy with If-None-Match: *, so exactly one wins, the other's
// error names its location, and disposing of the loser's failed checkpoint leaves the
// winner's metadata and state whole (see sdktest.TwoWritersOfOneCheckpoint).
func TestTwoWritersOfOneCheckpointS3(t *testing.T) {
	opts, bucket := s3Bucket(t)
	opts[sdk.OptionCheckpointDir] = "s3://" + bucket + "/checkpoints"
	sdktest.TwoWritersOfOneCheckpoint(t, func(t *testing.T) sdk.CheckpointStorage {
		s := fsstorage.New()
		if err := s.Configure(context.Background(), opts); err != nil {
			t.Fatalf("Configure: %v", err)
		}
		return s
	}, 10)
}

package fsstorage_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
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

// TestAdoptS3Objects: fsstorage on S3 takes over an object of the bucket in place
// (sdk.RemoteFileAdopter, as the disaggregated backend's tables are): the handle reads the
// object, the job lists it as shared state, and DiscardState deletes it and its marker; a
// file on the local disk, another medium than the checkpoints', is refused with
// sdk.ErrUnsupported.
func TestAdoptS3Objects(t *testing.T) {
	ctx := context.Background()
	opts, bucket := s3Bucket(t)
	opts[sdk.OptionCheckpointDir] = "s3://" + bucket + "/checkpoints"
	s := fsstorage.New()
	if err := s.Configure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	a, err := s.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(opts["s3.endpoint"][len("http://"):], &minio.Options{Creds: credentials.NewStaticV4("testkey", "testsecret12345", ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("table "), 1000)
	const key = "tables/job/op-0-1234/000007.ldb"
	if _, err := c.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	r := a.(sdk.RemoteFileAdopter)
	uri := "s3://" + bucket + "/" + key
	hs, err := r.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{{Ref: uri, Size: int64(len(data)), Checksum: sdktest.Checksum(data)}})
	if err != nil || len(hs) != 1 || hs[0].Ref != uri || hs[0].Scope != sdk.ScopeShared {
		t.Fatalf("AdoptRemoteFiles(%s) = %+v, %v; want a shared handle with the object's URI", uri, hs, err)
	}
	rc, err := sdktest.AccessReader(a).Open(ctx, hs[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the adopted object reads %d bytes, %v", len(got), err)
	}
	listed, err := a.(sdk.SharedStateLister).ListSharedState(ctx)
	if err != nil || len(listed) != 1 || listed[0].Ref != uri || listed[0].Size != int64(len(data)) {
		t.Fatalf("ListSharedState = %+v, %v; want the adopted object", listed, err)
	}
	local := filepath.Join(t.TempDir(), "000008.ldb")
	os.WriteFile(local, data, 0o644)
	if _, err := r.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{{Ref: "file://" + local, Size: int64(len(data))}}); !errors.Is(err, sdk.ErrUnsupported) {
		t.Fatalf("adopting a local file into checkpoints on S3: %v, want sdk.ErrUnsupported", err)
	}
	if err := a.DiscardState(ctx, hs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); err == nil {
		t.Fatalf("DiscardState left the adopted object %s", uri)
	}
	if listed, err := a.(sdk.SharedStateLister).ListSharedState(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("after DiscardState ListSharedState = %+v, %v; want nothing", listed, err)
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/flowstate/flowstate/internal/testbin"
)

// s3Bucket creates a fresh bucket on the test S3 server (scripts/with-s3.sh) and returns
// the config lines that point fsstorage at it. Without a server it skips locally and
// fails in CI, where make test always starts one.
func s3Bucket(t *testing.T) (bucket string, keys map[string]any) {
	t.Helper()
	endpoint := os.Getenv(envS3)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("FLOWSTATE_S3_ENDPOINT is not set: make test starts the S3 server (scripts/with-s3.sh)")
		}
		t.Skip("no S3 server: run through make test or scripts/with-s3.sh")
	}
	host := strings.TrimPrefix(strings.TrimPrefix(endpoint, "http://"), "https://")
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4("testkey", "testsecret12345", ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	bucket = fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	if err := c.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return bucket, map[string]any{
		"execution.checkpointing.fsstorage.s3.endpoint":   endpoint,
		"execution.checkpointing.fsstorage.s3.access-key": "testkey",
		"execution.checkpointing.fsstorage.s3.secret-key": "testsecret12345",
		"execution.checkpointing.fsstorage.s3.region":     "us-east-1",
		"execution.checkpointing.fsstorage.s3.path-style": true,
	}
}

// onS3 moves the word count's checkpoints to a fresh bucket, s3://<bucket>/flowstate, and
// returns the bucket.
func (s *wordcountSetup) onS3(t *testing.T) string {
	t.Helper()
	bucket, keys := s3Bucket(t)
	s.edit(t, map[string]any{"execution.checkpointing.dir": "s3://" + bucket + "/flowstate"})
	s.add(t, keys)
	return bucket
}

// TestWordCountOnS3SurvivesStorageCrash runs the word count with checkpoints in S3, kills
// the storage plugin twice, and checks the output and that checkpoints list shows s3://
// pointers.
func TestWordCountOnS3SurvivesStorageCrash(t *testing.T) {
	s := newWordcount(t, "leveldb", "filesystem", 2<<20, 25000, nil)
	bucket := s.onS3(t)
	r := s.run(t)
	kills := killWhenRecovered(t, r, "fsstorage", 2)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	if kills == 0 {
		t.Fatalf("the job ended before the storage could be killed:\n%s", tail(r.out.String(), 30))
	}
	s.check(t, r.out.String())
	out, err := runnerCmd(t, "checkpoints", "list", "--config", s.config, "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "s3://"+bucket+"/flowstate/wc/chk-") {
		t.Fatalf("checkpoints list does not show s3:// pointers:\n%s", out)
	}
}

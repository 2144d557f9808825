package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

var checkpointDirLine = regexp.MustCompile(`(?m)^execution\.checkpointing\.dir: .*$`)

// s3Config rewrites a word count configuration to checkpoint into a fresh bucket of the
// S3 server FLOWSTATE_S3_ENDPOINT names (credentials FLOWSTATE_S3_ACCESS_KEY and
// FLOWSTATE_S3_SECRET_KEY, default those of scripts/s3server.sh).
func s3Config(t *testing.T, cfg string) string {
	t.Helper()
	endpoint := os.Getenv(envS3)
	access, secret := envOr("FLOWSTATE_S3_ACCESS_KEY", "testkey"), envOr("FLOWSTATE_S3_SECRET_KEY", "testsecret12345")
	host := strings.TrimPrefix(strings.TrimPrefix(endpoint, "http://"), "https://")
	client, err := minio.New(host, &minio.Options{
		Creds: credentials.NewStaticV4(access, secret, ""), Secure: strings.HasPrefix(endpoint, "https://"), Region: "us-east-1",
	})
	if err != nil {
		t.Fatalf("S3 client for %s: %v", endpoint, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	bucket := "e2e-" + hex.EncodeToString(b)
	if err := client.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("make bucket %s at %s: %v", bucket, endpoint, err)
	}
	lines := "execution.checkpointing.dir: s3://" + bucket + "/checkpoints\n" +
		"execution.checkpointing.fsstorage.s3.endpoint: " + endpoint + "\n" +
		"execution.checkpointing.fsstorage.s3.access-key: " + access + "\n" +
		"execution.checkpointing.fsstorage.s3.secret-key: " + secret + "\n" +
		"execution.checkpointing.fsstorage.s3.region: us-east-1"
	return checkpointDirLine.ReplaceAllLiteralString(cfg, lines)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

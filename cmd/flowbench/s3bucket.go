package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3EndpointEnv names the test S3 server's endpoint; scripts/with-s3.sh starts the server
// and exports it (make bench runs flowbench under it).
const s3EndpointEnv = "FLOWSTATE_S3_ENDPOINT"

// The test S3 server's fixed credentials and region (scripts/s3server.sh).
const (
	s3AccessKey = "testkey"
	s3SecretKey = "testsecret12345"
	s3Region    = "us-east-1"
)

// s3Bucket is a bucket the benchmark made on the S3 server for one state size: the
// disaggregated backend's tables and every run's checkpoints live in it.
type s3Bucket struct {
	endpoint string
	name     string
	client   *minio.Client
}

// newS3Bucket makes a fresh bucket on the S3 server at endpoint (http://host:port).
func newS3Bucket(ctx context.Context, endpoint string) (*s3Bucket, error) {
	if endpoint == "" {
		return nil, fmt.Errorf("the disaggregated phase needs an S3 server: set %s (scripts/with-s3.sh starts one and sets it; make bench runs under it) or -s3-endpoint", s3EndpointEnv)
	}
	host, ok := strings.CutPrefix(endpoint, "http://")
	if !ok {
		return nil, fmt.Errorf("S3 endpoint %q: want http://host:port (the test server of scripts/with-s3.sh)", endpoint)
	}
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s3AccessKey, s3SecretKey, ""), Region: s3Region})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", endpoint, err)
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	b := &s3Bucket{endpoint: endpoint, name: "flowbench-" + hex.EncodeToString(suffix), client: c}
	if err := c.MakeBucket(ctx, b.name, minio.MakeBucketOptions{Region: s3Region}); err != nil {
		return nil, fmt.Errorf("create bucket %s on %s: %w", b.name, endpoint, err)
	}
	return b, nil
}

// uri returns s3://<bucket>/<prefix>.
func (b *s3Bucket) uri(prefix string) string { return "s3://" + b.name + "/" + prefix }

// options returns the configuration lines of the S3 client options, written below prefix
// (state.backend.disaggregated. or execution.checkpointing.fsstorage.).
func (b *s3Bucket) options(prefix string) string {
	return fmt.Sprintf("%[1]ss3.endpoint: %[2]s\n%[1]ss3.access-key: %[3]s\n%[1]ss3.secret-key: %[4]s\n%[1]ss3.region: %[5]s\n%[1]ss3.path-style: true\n",
		prefix, b.endpoint, s3AccessKey, s3SecretKey, s3Region)
}

// remove deletes every object of the bucket, then the bucket.
func (b *s3Bucket) remove(ctx context.Context) error {
	objects := b.client.ListObjects(ctx, b.name, minio.ListObjectsOptions{Recursive: true})
	for e := range b.client.RemoveObjects(ctx, b.name, objects, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			return fmt.Errorf("empty bucket %s: %s: %w", b.name, e.ObjectName, e.Err)
		}
	}
	if err := b.client.RemoveBucket(ctx, b.name); err != nil {
		return fmt.Errorf("remove bucket %s: %w", b.name, err)
	}
	return nil
}

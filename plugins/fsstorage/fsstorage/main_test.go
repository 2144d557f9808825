package fsstorage

import (
	"os"
	"testing"
)

// TestMain points every S3 client these tests create without an explicit endpoint at a
// closed loopback port, with static credentials, so no test (nor a fuzzed s3:// pointer)
// ever reaches AWS or an instance metadata service.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":      "http://127.0.0.1:9",
		"AWS_ENDPOINT_URL_S3":   "http://127.0.0.1:9",
		"AWS_ACCESS_KEY_ID":     "test",
		"AWS_SECRET_ACCESS_KEY": "test",
		"AWS_REGION":            "us-east-1",
	} {
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

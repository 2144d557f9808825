package fsys

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestS3Name(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"s3://bucket/prefix/ckpts", "/bucket/prefix/ckpts"},
		{"s3://bucket/prefix/ckpts/", "/bucket/prefix/ckpts"},
		{"s3a://my.bucket-1/x", "/my.bucket-1/x"},
		{"S3://bucket", "/bucket"},
		{"s3://bucket/", "/bucket"},
	} {
		got, err := S3Name(tc.uri)
		if err != nil || got != tc.want {
			t.Errorf("S3Name(%q) = %q, %v; want %q", tc.uri, got, err, tc.want)
		}
		if err == nil && S3URI(got) != "s3://"+strings.TrimPrefix(tc.want, "/") {
			t.Errorf("S3URI(%q) = %q", got, S3URI(got))
		}
	}
	for _, bad := range []string{
		"/local/path", "file:///x", "s3://", "s3://Bad_Bucket/x", "s3://bucket/a/../b",
		"s3://bucket/a//b", "s3://bucket:9000/x", "s3://key:secret@bucket/x", "s3://bucket/x?versionId=1",
	} {
		if got, err := S3Name(bad); err == nil || !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), bad) {
			t.Errorf("S3Name(%q) = %q, %v; want an error wrapping fs.ErrInvalid naming the URI", bad, got, err)
		}
	}
}

func TestS3ConfigFromOptions(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://127.0.0.1:9000",
		"AWS_REGION":            "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "envkey",
		"AWS_SECRET_ACCESS_KEY": "envsecret",
		"AWS_SESSION_TOKEN":     "tok",
	}
	getenv := func(k string) string { return env[k] }

	cfg, err := S3ConfigFromOptions(sdk.Options{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != "127.0.0.1:9000" || cfg.Secure || cfg.Region != "eu-west-1" ||
		cfg.AccessKey != "envkey" || cfg.SecretKey != "envsecret" || cfg.SessionToken != "tok" || cfg.PathStyle != nil || cfg.PartSize != 0 {
		t.Errorf("from the environment: %+v", cfg)
	}

	cfg, err = S3ConfigFromOptions(sdk.Options{
		OptionS3Endpoint: "minio.internal:9443", OptionS3Region: "us-west-2",
		OptionS3AccessKey: "k", OptionS3SecretKey: "s", OptionS3PathStyle: "true", OptionS3PartSize: "16mb",
	}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != "minio.internal:9443" || !cfg.Secure || cfg.Region != "us-west-2" || cfg.AccessKey != "k" ||
		cfg.SecretKey != "s" || cfg.SessionToken != "" || cfg.PathStyle == nil || !*cfg.PathStyle || cfg.PartSize != 16<<20 {
		t.Errorf("options over the environment: %+v", cfg)
	}

	env["AWS_ENDPOINT_URL_S3"] = "https://s3.example.com/"
	if cfg, err := S3ConfigFromOptions(sdk.Options{}, getenv); err != nil || cfg.Endpoint != "s3.example.com" || !cfg.Secure {
		t.Errorf("AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL: %+v, %v", cfg, err)
	}
	if cfg, err := S3ConfigFromOptions(sdk.Options{}, func(string) string { return "" }); err != nil || cfg.Endpoint != "s3.amazonaws.com" || !cfg.Secure || cfg.AccessKey != "" {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}

	for _, tc := range []struct {
		opts   sdk.Options
		option string
	}{
		{sdk.Options{OptionS3Endpoint: "ftp://host"}, OptionS3Endpoint},
		{sdk.Options{OptionS3Endpoint: "http://host/path"}, OptionS3Endpoint},
		{sdk.Options{OptionS3AccessKey: "k"}, OptionS3SecretKey},
		{sdk.Options{OptionS3SecretKey: "s"}, OptionS3AccessKey},
		{sdk.Options{OptionS3PathStyle: "maybe"}, OptionS3PathStyle},
		{sdk.Options{OptionS3PartSize: "1mb"}, OptionS3PartSize},
		{sdk.Options{OptionS3PartSize: "lots"}, OptionS3PartSize},
	} {
		_, err := S3ConfigFromOptions(tc.opts, getenv)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option {
			t.Errorf("options %v: %v, want an *sdk.OptionError for %s", tc.opts, err, tc.option)
		}
	}
	_, err = S3ConfigFromOptions(sdk.Options{}, func(k string) string {
		if k == "AWS_ACCESS_KEY_ID" {
			return "only-the-id"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("half the credentials in the environment: %v, want an error naming AWS_SECRET_ACCESS_KEY", err)
	}
}

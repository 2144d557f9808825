package fsys

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// Option keys of the S3 file system. In a job's configuration they are written below the
// storage plugin, e.g. execution.checkpointing.fsstorage.s3.endpoint.
const (
	// OptionS3Endpoint is the S3 endpoint: a URL (http://127.0.0.1:8333,
	// https://s3.eu-west-1.amazonaws.com) or host[:port], which means https. Default: the
	// environment's AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS S3.
	OptionS3Endpoint = "s3.endpoint"
	// OptionS3Region is the bucket's region. Default: AWS_REGION or AWS_DEFAULT_REGION, else
	// the client asks the endpoint for the bucket's location.
	OptionS3Region = "s3.region"
	// OptionS3AccessKey is the access key id. Default: AWS_ACCESS_KEY_ID, else the AWS
	// shared credentials file (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE).
	OptionS3AccessKey = "s3.access-key"
	// OptionS3SecretKey is the secret access key; it must be set with OptionS3AccessKey.
	// Default: AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN).
	OptionS3SecretKey = "s3.secret-key"
	// OptionS3PathStyle is "true" for path-style requests (http://endpoint/bucket/key, what
	// most S3-compatible servers want), "false" for virtual-hosted style
	// (http://bucket.endpoint/key). Default: path style except for AWS and a few clouds.
	OptionS3PathStyle = "s3.path-style"
	// OptionS3PartSize is the multipart upload part size, a human size from 5 MiB to
	// 5 GiB (default 8 MiB). Each file being written holds at most two parts in memory,
	// and one object has at most 10,000 parts.
	OptionS3PartSize = "s3.part-size"
)

// S3 part size limits.
const (
	// DefaultS3PartSize is the default OptionS3PartSize.
	DefaultS3PartSize = 8 << 20
	// MinS3PartSize is S3's smallest part (all parts but the last).
	MinS3PartSize = 5 << 20
	// MaxS3PartSize is S3's largest part.
	MaxS3PartSize = 5 << 30
	// maxS3Parts is S3's largest number of parts of one upload.
	maxS3Parts = 10000
)

// S3OptionKeys lists every option S3ConfigFromOptions reads.
func S3OptionKeys() []string {
	return []string{OptionS3Endpoint, OptionS3Region, OptionS3AccessKey, OptionS3SecretKey, OptionS3PathStyle, OptionS3PartSize}
}

// S3Config configures the S3 file system.
type S3Config struct {
	// Endpoint is the endpoint's host[:port] (without a scheme).
	Endpoint string
	// Secure selects https.
	Secure bool
	// Region is the bucket's region; "" lets the client find it.
	Region string
	// AccessKey, SecretKey and SessionToken are static credentials. When AccessKey is ""
	// the AWS shared credentials file is used, and anonymous access if it has none.
	AccessKey, SecretKey, SessionToken string
	// PathStyle forces path-style (true) or virtual-hosted-style (false) requests; nil
	// chooses by endpoint.
	PathStyle *bool
	// PartSize is the multipart part size in bytes; 0 means DefaultS3PartSize.
	PartSize int64
	// MaxRetries is how many times the client tries a request that failed for want of an
	// answer, waiting between tries (200 ms doubling to 1 s, jittered); 0 means the
	// client's default, 10.
	MaxRetries int
}

// S3ConfigFromOptions builds an S3Config from the plugin options (the keys S3OptionKeys
// lists; others are ignored) and, for what they leave unset, the usual AWS environment
// variables read through getenv (os.Getenv in production). Refused values are
// *sdk.OptionError naming the option.
func S3ConfigFromOptions(opts sdk.Options, getenv func(string) string) (S3Config, error) {
	var cfg S3Config
	firstOf := func(option string, envs ...string) (value, from string) {
		if v := strings.TrimSpace(opts[option]); v != "" {
			return v, option
		}
		for _, e := range envs {
			if v := strings.TrimSpace(getenv(e)); v != "" {
				return v, e
			}
		}
		return "", ""
	}

	endpoint, from := firstOf(OptionS3Endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	if endpoint == "" {
		endpoint = "https://s3.amazonaws.com"
	}
	host, secure, err := parseEndpoint(endpoint)
	if err != nil {
		return S3Config{}, &sdk.OptionError{Option: OptionS3Endpoint, Value: endpoint, Err: fmt.Errorf("from %s: %w", orDefault(from), err)}
	}
	cfg.Endpoint, cfg.Secure = host, secure

	cfg.Region, _ = firstOf(OptionS3Region, "AWS_REGION", "AWS_DEFAULT_REGION")

	access, secret := strings.TrimSpace(opts[OptionS3AccessKey]), strings.TrimSpace(opts[OptionS3SecretKey])
	switch {
	case access != "" && secret != "":
		cfg.AccessKey, cfg.SecretKey = access, secret
	case access != "":
		return S3Config{}, &sdk.OptionError{Option: OptionS3SecretKey, Value: "", Err: fmt.Errorf("must be set when %s is: %w", OptionS3AccessKey, sdk.ErrInvalidArgument)}
	case secret != "":
		return S3Config{}, &sdk.OptionError{Option: OptionS3AccessKey, Value: "", Err: fmt.Errorf("must be set when %s is: %w", OptionS3SecretKey, sdk.ErrInvalidArgument)}
	default:
		cfg.AccessKey = strings.TrimSpace(getenv("AWS_ACCESS_KEY_ID"))
		cfg.SecretKey = strings.TrimSpace(getenv("AWS_SECRET_ACCESS_KEY"))
		cfg.SessionToken = strings.TrimSpace(getenv("AWS_SESSION_TOKEN"))
		if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
			return S3Config{}, &sdk.OptionError{Option: OptionS3AccessKey, Value: "",
				Err: fmt.Errorf("the environment sets only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: %w", sdk.ErrInvalidArgument)}
		}
	}

	if v := strings.TrimSpace(opts[OptionS3PathStyle]); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return S3Config{}, &sdk.OptionError{Option: OptionS3PathStyle, Value: v, Err: fmt.Errorf("want true or false: %w", sdk.ErrInvalidArgument)}
		}
		cfg.PathStyle = &b
	}

	if v := strings.TrimSpace(opts[OptionS3PartSize]); v != "" {
		n, err := bytesize.Parse(v)
		if err == nil && (n < MinS3PartSize || n > MaxS3PartSize) {
			err = fmt.Errorf("part size %d bytes out of range [5 MiB, 5 GiB]: %w", n, sdk.ErrInvalidArgument)
		}
		if err != nil {
			return S3Config{}, &sdk.OptionError{Option: OptionS3PartSize, Value: v, Err: err}
		}
		cfg.PartSize = n
	}
	return cfg, nil
}

// parseEndpoint splits an endpoint URL or host[:port] into host[:port] and whether it
// uses https.
func parseEndpoint(s string) (host string, secure bool, err error) {
	if !strings.Contains(s, "://") {
		if strings.ContainsAny(s, "/?#@ ") {
			return "", false, fmt.Errorf("endpoint %q: want a URL such as http://127.0.0.1:8333 or a host[:port]: %w", s, sdk.ErrInvalidArgument)
		}
		return s, true, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false, fmt.Errorf("endpoint %q: %w: %w", s, sdk.ErrInvalidArgument, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		secure = true
	case "http":
	default:
		return "", false, fmt.Errorf("endpoint %q: scheme %q, want http or https: %w", s, u.Scheme, sdk.ErrInvalidArgument)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false, fmt.Errorf("endpoint %q: want scheme://host[:port] with no path, query or credentials: %w", s, sdk.ErrInvalidArgument)
	}
	return u.Host, secure, nil
}

// orDefault names where a value came from for messages.
func orDefault(from string) string {
	if from == "" {
		return "the default"
	}
	if strings.HasPrefix(from, "AWS_") {
		return "environment variable " + from
	}
	return "option " + from
}

package disaggregated

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"

	"github.com/flowstate/flowstate/plugins/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// Option keys the disaggregated backend accepts.
const (
	// OptionRemote is the remote store of the table files: file:///absolute/dir or
	// s3://bucket/prefix (on the S3 client the s3.* options configure).
	OptionRemote = "remote"
	// OptionLocalDir is the local working directory: the databases' journals and
	// manifests, and the cache.
	OptionLocalDir = "localdir"
	// OptionCacheSize bounds the cache of table files of the plugin's process, in human
	// units ("256mb"); tables held open by a read come on top.
	OptionCacheSize = "cache-size"
	// OptionBlockCacheSize is the in-memory block cache of each keyed backend's database.
	OptionBlockCacheSize = "block-cache-size"
	// OptionWriteBufferSize is the memtable size of each keyed backend's database.
	OptionWriteBufferSize = "write-buffer-size"
)

// The S3 options of an s3:// remote: fsstorage's, read the same way (fsys.S3OptionKeys and
// fsys.S3ConfigFromOptions: what they leave unset comes from the AWS environment variables).
const (
	// OptionS3Endpoint is the S3 endpoint (default AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
	// else AWS S3).
	OptionS3Endpoint = fsys.OptionS3Endpoint
	// OptionS3Region is the bucket's region (default AWS_REGION, AWS_DEFAULT_REGION).
	OptionS3Region = fsys.OptionS3Region
	// OptionS3AccessKey is the S3 access key id (default AWS_ACCESS_KEY_ID).
	OptionS3AccessKey = fsys.OptionS3AccessKey
	// OptionS3SecretKey is the S3 secret access key (default AWS_SECRET_ACCESS_KEY).
	OptionS3SecretKey = fsys.OptionS3SecretKey
	// OptionS3PathStyle selects path-style S3 requests ("true" or "false").
	OptionS3PathStyle = fsys.OptionS3PathStyle
	// OptionS3PartSize is the multipart upload part size (default 8mb); smaller tables go
	// up in one PUT.
	OptionS3PartSize = fsys.OptionS3PartSize
)

// OptionKeys returns every option Configure accepts.
func OptionKeys() []string {
	return append([]string{OptionRemote, OptionLocalDir, OptionCacheSize, OptionBlockCacheSize, OptionWriteBufferSize}, fsys.S3OptionKeys()...)
}

// Defaults, sized for a small (2-core) machine.
const (
	// DefaultCacheSize is the default bound of the cache of table files.
	DefaultCacheSize = 256 << 20
	// DefaultBlockCacheSize is the default block cache per keyed backend.
	DefaultBlockCacheSize = 16 << 20
	// DefaultWriteBufferSize is the default memtable size per keyed backend.
	DefaultWriteBufferSize = 16 << 20
)

// DefaultLocalDir returns the default working directory, <os.TempDir()>/flowstate-disaggregated.
func DefaultLocalDir() string { return filepath.Join(os.TempDir(), "flowstate-disaggregated") }

// DefaultRemote returns the default remote store, a directory beside the default working
// directory: file://<os.TempDir()>/flowstate-disaggregated-remote. It is on the local
// disk, so it outlives the process but not the machine; configure an s3:// remote (or a
// directory that survives the machine) for more.
func DefaultRemote() string {
	return "file://" + filepath.Join(os.TempDir(), "flowstate-disaggregated-remote")
}

// config is the backend's configuration.
type config struct {
	remote          string
	s3              sdk.Options // the s3.* options given, for every s3:// remote opened
	localDir        string
	cacheSize       int64
	blockCacheSize  int
	writeBufferSize int
}

func defaultConfig() config {
	return config{remote: DefaultRemote(), localDir: DefaultLocalDir(), cacheSize: DefaultCacheSize,
		blockCacheSize: DefaultBlockCacheSize, writeBufferSize: DefaultWriteBufferSize}
}

// parseOptions validates opts over the defaults, creating the working directory and the
// remote directory, or checking that the remote bucket answers (until ctx is done). The
// s3.* options are read, with the AWS environment variables, for an s3:// remote; with a
// file:// one the values given are still checked, so that a mistyped one fails here.
func parseOptions(ctx context.Context, opts sdk.Options) (config, Remote, error) {
	c := defaultConfig()
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return c, nil, err
	}
	c.s3 = sdk.Options{}
	for _, k := range fsys.S3OptionKeys() {
		if v, ok := opts[k]; ok {
			c.s3[k] = v
		}
	}
	if v, ok := opts[OptionLocalDir]; ok {
		if v == "" {
			return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: fmt.Errorf("want a directory")}
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: err}
		}
		c.localDir = abs
	}
	if v, ok := opts[OptionCacheSize]; ok {
		n, err := bytesize.Parse(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: OptionCacheSize, Value: v, Err: err}
		}
		if n < 0 {
			return c, nil, &sdk.OptionError{Option: OptionCacheSize, Value: v, Err: fmt.Errorf("want a size of 0 or more")}
		}
		c.cacheSize = n
	}
	for _, o := range []struct {
		key string
		dst *int
	}{{OptionBlockCacheSize, &c.blockCacheSize}, {OptionWriteBufferSize, &c.writeBufferSize}} {
		v, ok := opts[o.key]
		if !ok {
			continue
		}
		n, err := bytesize.Parse(v)
		if err != nil {
			return c, nil, &sdk.OptionError{Option: o.key, Value: v, Err: err}
		}
		if n <= 0 || n > math.MaxInt32 {
			return c, nil, &sdk.OptionError{Option: o.key, Value: v, Err: fmt.Errorf("want a size between 1 byte and 2gb")}
		}
		*o.dst = int(n)
	}
	if v, ok := opts[OptionRemote]; ok {
		c.remote = v
	}
	if !fsys.IsS3URI(c.remote) {
		if _, err := fsys.S3ConfigFromOptions(c.s3, func(string) string { return "" }); err != nil {
			return c, nil, err
		}
	}
	remote, err := openRemote(ctx, c.remote, c.s3)
	if err != nil {
		return c, nil, remoteError(c.remote, err)
	}
	if err := os.MkdirAll(c.localDir, 0o755); err != nil {
		return c, nil, &sdk.OptionError{Option: OptionLocalDir, Value: c.localDir, Err: fmt.Errorf("create working directory: %w", err)}
	}
	return c, remote, nil
}

// remoteError is the error of a remote store that could not be opened: an *sdk.OptionError
// naming OptionRemote (the runner stops: the option is wrong), except for a store that did
// not answer, which is an error of its own so that the restart strategy may try again (an
// object store that is down now may answer later).
func remoteError(uri string, err error) error {
	if errors.Is(err, errUnreachable) {
		return fmt.Errorf("option %s (%s): %w", OptionRemote, redacted(uri), err)
	}
	return &sdk.OptionError{Option: OptionRemote, Value: redacted(uri), Err: err}
}

// redacted returns uri with the password of its user information, if any, replaced, for
// errors: credentials do not belong in a remote's URI, and an error must not repeat them.
func redacted(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.User != nil {
		return u.Redacted()
	}
	return uri
}

package disaggregated

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestOptions(t *testing.T) {
	if info := New().PluginInfo(); info.Name != "disaggregated" || info.Version == "" {
		t.Fatalf("PluginInfo = %+v", info)
	}
	dir := t.TempDir()
	c, _, err := parseOptions(bg, sdk.Options{"localdir": filepath.Join(dir, "l"), "remote": "file://" + filepath.Join(dir, "r"), "cache-size": "1gb", "write-buffer-size": "4mb"})
	if err != nil || c.cacheSize != 1<<30 || c.writeBufferSize != 4<<20 || c.blockCacheSize != DefaultBlockCacheSize {
		t.Fatalf("parseOptions = %+v, %v", c, err)
	}
	if c, _, err := parseOptions(bg, sdk.Options{"localdir": dir, "remote": filepath.Join(dir, "plain")}); err != nil || c.cacheSize != 256<<20 {
		t.Fatalf("defaults: %+v, %v; want a cache of 256 MiB", c, err)
	}
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		opts   sdk.Options
		option string
		says   string
	}{
		{sdk.Options{"remote": "ftp://host/x"}, "remote", "s3://bucket/prefix"},
		{sdk.Options{"remote": "s3:///x"}, "remote", "bucket"},
		{sdk.Options{"remote": "s3://Bad_Bucket/x"}, "remote", "Bad_Bucket"},
		{sdk.Options{"remote": "s3://bucket/x", "s3.endpoint": "ftp://host"}, "remote", "s3.endpoint"},
		{sdk.Options{"remote": "s3://bucket/x", "s3.access-key": "k"}, "remote", "s3.secret-key"},
		{sdk.Options{"remote": "s3://key:hunter2@bucket/x"}, "remote", "credentials do not belong in the URI"},
		{sdk.Options{"s3.part-size": "1kb"}, "s3.part-size", "out of range"},
		{sdk.Options{"s3.path-style": "maybe"}, "s3.path-style", "true or false"},
		{sdk.Options{"remote": "relative/dir"}, "remote", "absolute"},
		{sdk.Options{"remote": "file://" + filepath.Join(file, "sub")}, "remote", "a-file"},
		{sdk.Options{"cache-size": "lots"}, "cache-size", "lots"},
		{sdk.Options{"write-buffer-size": "0"}, "write-buffer-size", "between"},
		{sdk.Options{"localdir": ""}, "localdir", "directory"},
		{sdk.Options{"incremental": "true"}, "incremental", "unknown option"},
	}
	for _, c := range bad {
		opts := sdk.Options{"localdir": dir, "remote": "file://" + filepath.Join(dir, "r")}
		maps.Copy(opts, c.opts)
		err := New().Configure(bg, opts)
		var oe *sdk.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("Configure(%v) = %v; want an *sdk.OptionError for %q saying %q (and no secret)", c.opts, err, c.option, c.says)
		}
	}
}

// TestS3RemoteRefused: an s3:// remote whose endpoint refuses the bucket fails Configure
// with an *sdk.OptionError naming "remote" and the bucket (the runner stops: the option is
// wrong); one whose endpoint does not answer before Configure's context is done fails it
// with an error naming them that is no *sdk.OptionError, so that the restart strategy may
// outlast an object store that is down.
func TestS3RemoteRefused(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/silent") {
			<-release
			return
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handlers
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	for _, c := range []struct {
		bucket    string
		ctx       context.Context
		want      error
		permanent bool
	}{
		{"refused", bg, fs.ErrPermission, true},
		{"silent", cancelled, context.Canceled, false},
	} {
		opts := sdk.Options{"localdir": t.TempDir(), "remote": "s3://" + c.bucket + "/x", "s3.endpoint": srv.URL,
			"s3.region": "us-east-1", "s3.path-style": "true", "s3.access-key": "k", "s3.secret-key": "s3cret"}
		err := New().Configure(c.ctx, opts)
		var oe *sdk.OptionError
		if err == nil || errors.As(err, &oe) != c.permanent || c.permanent && oe.Option != "remote" ||
			!strings.Contains(err.Error(), "remote") || !strings.Contains(err.Error(), "bucket "+c.bucket) ||
			strings.Contains(err.Error(), "s3cret") || !errors.Is(err, c.want) {
			t.Fatalf("bucket %s: Configure = %v; want an error naming remote and the bucket, wrapping %v, an *sdk.OptionError: %v, no secret", c.bucket, err, c.want, c.permanent)
		}
	}
}

// TestS3RemoteMissingBucket: an s3:// remote in a bucket the server does not have fails
// Configure with an *sdk.OptionError naming "remote" and the bucket, wrapping
// fs.ErrNotExist.
func TestS3RemoteMissingBucket(t *testing.T) {
	_, opts := s3TestBucket(t)
	opts["localdir"], opts["remote"] = t.TempDir(), "s3://no-such-bucket-"+randomSuffix()+"/x"
	err := New().Configure(bg, opts)
	var oe *sdk.OptionError
	if !errors.As(err, &oe) || oe.Option != "remote" || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "bucket no-such-bucket-") {
		t.Fatalf("Configure = %v; want an *sdk.OptionError for remote naming the bucket, wrapping fs.ErrNotExist", err)
	}
}

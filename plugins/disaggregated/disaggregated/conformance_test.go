package disaggregated_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions configure the backend with a fresh working directory, the remote
// store remote returns, a small memtable (so that the large-state check spans several table
// files) and a cache smaller than the large state (so that its reads evict and fetch tables
// again).
func conformanceOptions(t *testing.T, remote func(t *testing.T) sdk.Options) sdk.Options {
	opts := sdk.Options{
		disaggregated.OptionLocalDir:        filepath.Join(t.TempDir(), "local"),
		disaggregated.OptionWriteBufferSize: "1mb",
		disaggregated.OptionCacheSize:       "2mb",
	}
	maps.Copy(opts, remote(t))
	return opts
}

// fileRemote returns the options of a fresh remote directory.
func fileRemote(t *testing.T) sdk.Options {
	return sdk.Options{disaggregated.OptionRemote: "file://" + filepath.Join(t.TempDir(), "remote")}
}

// s3Remotes returns a function that gives each call a remote store below a prefix of its
// own in one fresh bucket of the test S3 server (see disaggregated.S3TestBucket), made for t.
func s3Remotes(t *testing.T) func(t *testing.T) sdk.Options {
	bucket, s3opts := disaggregated.S3TestBucket(t)
	var n atomic.Int64
	return func(*testing.T) sdk.Options {
		opts := maps.Clone(s3opts)
		opts[disaggregated.OptionRemote] = fmt.Sprintf("s3://%s/backend-%d", bucket, n.Add(1))
		return opts
	}
}

// TestConformance runs the sdktest kit against the backend in-process and as a plugin
// process, on a file:// remote, and in-process on an s3:// one (the test S3 server).
func TestConformance(t *testing.T) {
	t.Run("in-process", func(t *testing.T) { conformInProcess(t, fileRemote) })
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "disaggregated")
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			return sdktest.ProcessStateBackend(t, path, conformanceOptions(t, fileRemote))
		})
	})
	t.Run("s3", func(t *testing.T) { conformInProcess(t, s3Remotes(t)) })
}

// conformInProcess runs the kit against in-process backends on the stores remote returns.
func conformInProcess(t *testing.T, remote func(t *testing.T) sdk.Options) {
	sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
		b := disaggregated.New()
		if err := b.Configure(context.Background(), conformanceOptions(t, remote)); err != nil {
			t.Fatalf("Configure: %v", err)
		}
		return b
	})
}

package dirstorage

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestTwoWritersOfOneCheckpoint: a runner that lost the job while its chk-N/_metadata was
// being written and its successor, which took the same id, both publish checkpoint N on
// the local disk: the link that publishes _metadata lets exactly one win, the other's
// error names its location, and disposing of the loser's failed checkpoint leaves the
// winner's metadata and state whole (see sdktest.TwoWritersOfOneCheckpoint).
func TestTwoWritersOfOneCheckpoint(t *testing.T) {
	opts := sdk.Options{sdk.OptionCheckpointDir: filepath.Join(t.TempDir(), "checkpoints")}
	sdktest.TwoWritersOfOneCheckpoint(t, func(t *testing.T) sdk.CheckpointStorage {
		p := &plugin{}
		if err := p.Configure(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		return p
	}, 20)
}

package sdktest

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/ref"
)

// The kit against the reference plugins, which prove it can be satisfied (and, with
// SDKTEST_BROKEN set, that it catches their deliberate bugs: kit_test.go).

func TestRefBackend(t *testing.T) {
	StateBackend(t, func(t *testing.T) sdk.StateBackend { return ref.Backend{} })
}

func TestRefStorage(t *testing.T) {
	for _, sp := range []string{"", "/savepoints"} {
		t.Run("savepoint-dir="+sp, func(t *testing.T) {
			CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				s := ref.NewStorage()
				opts := sdk.Options{}
				if sp != "" {
					opts[sdk.OptionSavepointDir] = sp
				}
				if err := s.Configure(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

package leveldb

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// currentLimit returns the process's memory limit, unchanged.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// keepLimit restores the test process's memory limit when t ends, and clears GOMEMLIMIT
// for t.
func keepLimit(t *testing.T) {
	old := currentLimit()
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	t.Setenv("GOMEMLIMIT", "")
}

// TestMemoryLimitFollowsTheKeyedBackends: a backend that owns its process sets the
// process's Go memory limit to 64 MiB + (block cache + 4 x memtable) per open keyed
// backend, as each opens and closes; a fixed memory-limit is kept whatever is open, 0
// lifts the limit, and a backend that does not own its process never sets it.
func TestMemoryLimitFollowsTheKeyedBackends(t *testing.T) {
	keepLimit(t)
	const mib = 1 << 20
	b := New()
	b.OwnProcess()
	if err := b.Configure(bg, sdk.Options{"localdir": t.TempDir(), "block-cache-size": "8mb", "write-buffer-size": "4mb"}); err != nil {
		t.Fatal(err)
	}
	if got := currentLimit(); got != 64*mib {
		t.Fatalf("limit with no keyed backend = %d MiB, want 64", got/mib)
	}
	kb1 := sdktest.OpenKeyed(t, b, sdktest.Params("op", 0, 2))
	kb2 := sdktest.OpenKeyed(t, b, sdktest.Params("op", 1, 2))
	if got, want := currentLimit(), int64(64+2*(8+4*4))*mib; got != want {
		t.Fatalf("limit with two keyed backends = %d MiB, want %d", got/mib, want/mib)
	}
	kb1.Close()
	kb1.Close() // a second Close gives nothing back again
	if got, want := currentLimit(), int64(64+8+4*4)*mib; got != want {
		t.Fatalf("limit after one Close = %d MiB, want %d", got/mib, want/mib)
	}
	if err := b.Configure(bg, sdk.Options{"localdir": t.TempDir(), "memory-limit": "300mb"}); err != nil {
		t.Fatal(err)
	}
	if got := currentLimit(); got != 300*mib {
		t.Fatalf("limit with memory-limit 300mb = %d MiB", got/mib)
	}
	kb2.Close()
	if got := currentLimit(); got != 300*mib {
		t.Fatalf("fixed limit moved to %d MiB on Close", got/mib)
	}
	if err := b.Configure(bg, sdk.Options{"localdir": t.TempDir(), "memory-limit": "0"}); err != nil {
		t.Fatal(err)
	}
	if got := currentLimit(); got != math.MaxInt64 {
		t.Fatalf("limit with memory-limit 0 = %d, want none", got)
	}

	debug.SetMemoryLimit(123 * mib)
	in := New() // loaded into another process: that process's limit stays
	if err := in.Configure(bg, sdk.Options{"localdir": t.TempDir(), "memory-limit": "300mb"}); err != nil {
		t.Fatal(err)
	}
	sdktest.OpenKeyed(t, in, sdktest.Params("op", 0, 1))
	if got := currentLimit(); got != 123*mib {
		t.Fatalf("a backend that does not own its process set the limit to %d MiB", got/mib)
	}
}

// TestMemoryLimitLeavesGOMEMLIMIT: without memory-limit, a process started with
// GOMEMLIMIT keeps the limit it gives.
func TestMemoryLimitLeavesGOMEMLIMIT(t *testing.T) {
	keepLimit(t)
	t.Setenv("GOMEMLIMIT", "123MiB")
	debug.SetMemoryLimit(123 << 20) // what the runtime read from it at start
	b := New()
	b.OwnProcess()
	if err := b.Configure(bg, sdk.Options{"localdir": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	sdktest.OpenKeyed(t, b, sdktest.Params("op", 0, 1))
	if got := currentLimit(); got != 123<<20 {
		t.Fatalf("limit = %d MiB, want GOMEMLIMIT's 123", got>>20)
	}
}

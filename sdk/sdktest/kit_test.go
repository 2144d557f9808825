package sdktest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestKitCatchesBrokenPlugins runs the kit against the reference plugins with one
// deliberate bug each, in a child test process, and checks that exactly the subtest naming
// the broken promise fails.
func TestKitCatchesBrokenPlugins(t *testing.T) {
	cases := []struct{ mode, run, fail string }{
		{"scan-limit", "^TestRefBackend$/^Scan$", "TestRefBackend/Scan/LimitIsHonoured"},
		{"absent-empty", "^TestRefBackend$/^Get$", "TestRefBackend/Get/AbsentIsNilPresentEmptyIsNonNil"},
		{"snapshot-live", "^TestRefBackend$/^Snapshot$", "TestRefBackend/Snapshot/WritesAfterSnapshotDoNotShow/RestoredStateIsTheFrozenView"},
		{"get-shares", "^TestRefBackend$/^Get$", "TestRefBackend/Get/ReturnedValuesAreCopies"},
		{"closed-works", "^TestRefBackend$/^Close$", "TestRefBackend/Close/CallsAfterCloseFail"},
		{"range-unchecked", "^TestRefBackend$/^CreateKeyedStateBackend$", "TestRefBackend/CreateKeyedStateBackend/InvalidKeyGroupRangeIsInvalidArgument"},
		{"lease-blind-replace", "^TestRefStorage$/^savepoint-dir=$/^Lease$", "TestRefStorage/savepoint-dir=/Lease"},
		{"adopted-kept", "^TestRefStorage$/^savepoint-dir=$/^AdoptRemoteFiles$", "TestRefStorage/savepoint-dir=/AdoptRemoteFiles"},
		{"dispose-keeps", "^TestRefStorage$/^savepoint-dir=$/^Dispose$", "TestRefStorage/savepoint-dir=/Dispose/DisposeCheckpoint/PointerNoLongerResolves"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", c.run, "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "SDKTEST_BROKEN="+c.mode)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("kit passed a plugin with bug %q:\n%s", c.mode, out)
			}
			if !strings.Contains(string(out), "--- FAIL: "+c.fail+" ") {
				t.Fatalf("kit did not fail %s for bug %q:\n%s", c.fail, c.mode, out)
			}
		})
	}
}

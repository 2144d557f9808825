// Package sdktest is the conformance kit for Flowstate plugins.
//
// A plugin author runs the very suite the built-in plugins pass from an ordinary Go test:
//
//	func TestConformance(t *testing.T) {
//		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
//			b := mybackend.New()
//			if err := b.Configure(context.Background(), sdk.Options{"localdir": t.TempDir()}); err != nil {
//				t.Fatal(err)
//			}
//			return b
//		})
//	}
//
// StateBackend and CheckpointStorage check every promise the doc comments of package sdk make,
// each in a subtest of its own whose name says which promise failed. The factory returns a
// fresh, configured plugin; the kit calls it several times and the factory registers its own
// teardown with t.Cleanup.
//
// The in-memory helpers the kit uses are exported for the author's own tests: MemoryStreams
// stands in for the runner's stream factory and state reader during snapshots and restores,
// AdoptingStreams for those of a checkpoint storage that takes local files over in place
// (sdk.RemoteFileAdopter), and NewVerifyingReader and AccessReader check sizes and
// checksums the way the runner does.
//
// So are the helpers its state backend checks are built from, for a backend's own tests of
// what the contract leaves open (native formats, working files): Params, OpenKeyed,
// StateKey, NumberedKey, Fill and MustWrite build state and keep a Model of it in step,
// CheckContents compares a keyed backend with a Model, TakeSnapshot and OpenRestored take
// and restore snapshots. BenchStateBackend runs the kit's benchmarks; UserKey,
// WriteUserKeys and DiscardStreams help write more.
//
// To check a plugin through its real process boundary (gRPC, go-plugin), build its binary
// and use ProcessStateBackend or ProcessCheckpointStorage as the factory:
//
//	sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
//		return sdktest.ProcessCheckpointStorage(t, binaryPath, sdk.Options{"dir": t.TempDir()})
//	})
//
// TwoWritersOfOneCheckpoint, outside the suite, checks a storage whose checkpoints two
// runners reach (a directory, a bucket): of two writers of one checkpoint exactly one
// publishes, and the loser's disposal leaves the winner's checkpoint whole.
//
// The kit's check of Configure calls Configure a second time, on a plugin the factory
// already configured, with an unknown option: it expects an *sdk.OptionError naming that
// option.
//
// The kit checks a plugin from the host's side: it imports the contract, sdk/kvstream and
// the host end (sdk/host, for the process boundary), and must never import the plugin end
// (sdk/server) nor anything of the repository outside the SDK module.
package sdktest

// Command refprev is the reference test plugin (a state backend and checkpoint storage of
// package ref) speaking the previous protocol: protocol version 1 as plugins built before
// its additions (the Pipeline stream, reads ahead, local restore reads, local snapshot
// writes, the optional interfaces of accesses, remote files) speak it, announcing none of
// them. FLOWSTATE_TESTPLUGIN_ANNOUNCE, a comma-separated list of "pipeline",
// "reads-ahead", "local-reads", "local-writes", "access-interfaces" and "remote-files",
// plays a plugin built between two additions.
//
// It links the SDK's plugin end (sdk/server, with sdk/internal/wire for the protocol's
// names) and ref, never the host end.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/flowstate/flowstate/sdk/internal/testplugins/ref"
	"github.com/flowstate/flowstate/sdk/internal/wire"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	var a wire.Additions
	for _, name := range strings.FieldsFunc(os.Getenv("FLOWSTATE_TESTPLUGIN_ANNOUNCE"), func(r rune) bool { return r == ',' }) {
		switch name {
		case "pipeline":
			a.Pipeline = true
		case "reads-ahead":
			a.ReadsAhead = true
		case "local-reads":
			a.LocalReads = true
		case "local-writes":
			a.LocalWrites = true
		case "access-interfaces":
			a.AccessInterfaces = true
		case "remote-files":
			a.RemoteFiles = true
		default:
			fmt.Fprintf(os.Stderr, "refprev: unknown addition %q in FLOWSTATE_TESTPLUGIN_ANNOUNCE\n", name)
			os.Exit(2)
		}
	}
	wire.Announced = a
	server.Serve(ref.NewPlugin(), server.WithProtocolVersions(1))
}

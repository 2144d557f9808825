// Command flowstate-plugin-disaggregated is the disaggregated state backend plugin: working
// state lives in an embedded LSM store (goleveldb) whose table files are on a remote store,
// read through a bounded local cache, and checkpoints reference them in place.
//
// It links only the SDK (its contract, its helpers and its plugin end, sdk/server) and its
// own package plugins/disaggregated/disaggregated: never the runtime, another plugin or the
// SDK's host end (sdk/host), which internal/deps checks.
package main

import (
	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	server.Serve(disaggregated.New())
}

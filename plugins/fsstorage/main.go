// Command flowstate-plugin-fsstorage serves the file-system checkpoint storage as a
// Flowstate plugin.
//
// It links only the SDK (its contract, its helpers and its plugin end, sdk/server) and its
// own package plugins/fsstorage/fsstorage: never the runtime, another plugin or the SDK's
// host end (sdk/host), which internal/deps checks.
package main

import (
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(fsstorage.New()) }

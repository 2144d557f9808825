// Command flowstate-plugin-boltdb is a third-party Flowstate plugin: a state backend over
// bbolt (go.etcd.io/bbolt) that also serves as a checkpoint storage. Build it as
// flowstate-plugin-boltdb and drop it into the runner's plugin directory:
//
//	go build -o /path/to/plugins/flowstate-plugin-boltdb .
//
// The example is a module of its own, as a third party's plugin is: it links the SDK (its
// contract, helpers and plugin end, sdk/server) and boltstate, and needs nothing else of
// this repository, neither the runtime nor a built-in plugin (internal/deps checks it).
package main

import (
	"github.com/flowstate/flowstate/examples/thirdparty/boltstate"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(boltstate.New()) }

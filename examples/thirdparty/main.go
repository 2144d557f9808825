// Command flowstate-plugin-boltdb is a third-party Flowstate plugin: a state backend over
// bbolt (go.etcd.io/bbolt) that also serves as a checkpoint storage. Build it as
// flowstate-plugin-boltdb and drop it into the runner's plugin directory:
//
//	go build -o /path/to/plugins/flowstate-plugin-boltdb .
package main

import (
	"github.com/flowstate/flowstate/examples/thirdparty/boltstate"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(boltstate.New()) }

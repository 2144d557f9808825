// Command flowstate-plugin-leveldb is the leveldb state backend plugin: working state lives
// in an embedded LSM store (goleveldb) on local disk, so it can exceed memory. The process
// bounds its memory by its configuration (option memory-limit).
//
// It links only the SDK (its contract, its helpers and its plugin end, sdk/server) and its
// own package plugins/leveldb/leveldb: never the runtime, another plugin or the SDK's host
// end (sdk/host), which internal/deps checks.
package main

import (
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	b := leveldb.New()
	b.OwnProcess()
	server.Serve(b)
}

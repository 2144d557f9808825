// Command flowstate-plugin-leveldb is the leveldb state backend plugin: working state lives
// in an embedded LSM store (goleveldb) on local disk, so it can exceed memory. The process
// bounds its memory by its configuration (option memory-limit).
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

// Command flowstate-plugin-leveldb is the leveldb state backend plugin: working state lives
// in an embedded LSM store (goleveldb) on local disk, so it can exceed memory.
package main

import (
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk"
)

func main() { sdk.Serve(leveldb.New()) }

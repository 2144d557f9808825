// Command memstorage is a test plugin that is only a checkpoint storage.
//
// It links the SDK's plugin end (sdk/server) and memstore, never the host end.
package main

import (
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(memstore.NewStorageOnly()) }

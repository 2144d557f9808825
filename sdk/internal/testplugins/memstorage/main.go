// Command memstorage is a test plugin that is only a checkpoint storage.
package main

import (
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(memstore.NewStorageOnly()) }

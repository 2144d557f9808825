// Command memstorage is a test plugin that is only a checkpoint storage.
package main

import (
	"github.com/flowstate/flowstate/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk"
)

func main() { sdk.Serve(memstore.NewStorageOnly()) }

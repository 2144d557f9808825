// Command memstorage is a test plugin that is only a checkpoint storage.
package main

import (
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
)

func main() { sdk.Serve(memstore.NewStorageOnly()) }

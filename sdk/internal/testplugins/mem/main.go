// Command mem is the in-memory test plugin, a state backend and a checkpoint storage.
package main

import (
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
)

func main() { sdk.Serve(memstore.New()) }

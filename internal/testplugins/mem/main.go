// Command mem is the in-memory test plugin, a state backend and a checkpoint storage.
package main

import (
	"github.com/flowstate/flowstate/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk"
)

func main() { sdk.Serve(memstore.New()) }

// Command flowstate-plugin-fsstorage serves the file-system checkpoint storage as a
// Flowstate plugin.
package main

import (
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(fsstorage.New()) }

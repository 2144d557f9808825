// Command memv3 is the in-memory test plugin speaking only protocol version 3, which no
// host speaks.
//
// It links the SDK's plugin end (sdk/server) and memstore, never the host end.
package main

import (
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	server.Serve(memstore.New(), server.WithProtocolVersions(3))
}

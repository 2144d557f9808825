// Command memv3 is the in-memory test plugin speaking only protocol version 3, which no
// host speaks.
package main

import (
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
)

func main() {
	sdk.Serve(memstore.New(), sdk.ServeOpts{ProtocolVersions: []int{3}})
}

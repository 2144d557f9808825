// Command memv3 is the in-memory test plugin speaking only protocol version 3, which no
// host speaks.
package main

import (
	"github.com/flowstate/flowstate/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk"
)

func main() {
	sdk.ServeWithOptions(memstore.New(), sdk.ServeOpts{ProtocolVersions: []int{3}})
}

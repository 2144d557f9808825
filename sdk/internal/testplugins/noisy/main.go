// Command noisy is the in-memory test plugin flooding stderr: many raw lines before it
// serves, and a log line every millisecond while it does.
//
// It links the SDK's plugin end (sdk/server) and memstore, never the host end.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/memstore"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() {
	line := strings.Repeat("x", 200)
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(os.Stderr, "noise %d %s\n", i, line)
	}
	go func() {
		for i := 0; ; i++ {
			sdk.Logger().Info("noise", "i", i, "filler", line)
			time.Sleep(time.Millisecond)
		}
	}()
	server.Serve(memstore.New())
}

// Command flowstate-plugin-hashmap is the hashmap state backend plugin: working state lives
// in the plugin's heap and is snapshotted in full, in the canonical format.
//
// It links only the SDK (its contract, its helpers and its plugin end, sdk/server) and its
// own package plugins/hashmap/hashmap: never the runtime, another plugin or the SDK's host
// end (sdk/host), which internal/deps checks.
package main

import (
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(hashmap.New()) }

// Command flowstate-plugin-hashmap is the hashmap state backend plugin: working state lives
// in the plugin's heap and is snapshotted in full, in the canonical format.
package main

import (
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(hashmap.New()) }

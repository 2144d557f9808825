// Command faultstorage is fsstorage with injected delays: a slow or hanging checkpoint
// storage for the fault tests of internal/e2e. Besides fsstorage's options it takes:
//
//	fault  none (default), slow, hang or enospc (state stream writes fail as on a full
//	       disk)
//	delay  how long each delayed call waits (a Go duration; default 200ms). A hang waits
//	       this long ignoring its context, as a stuck file system would, then goes on.
//	every  only checkpoints whose id is a multiple of every are affected (default 1: all)
//	at     state (default): closing a state stream waits; metadata: finalizing the
//	       metadata waits
//
// It links, like a plugin, only the SDK (its contract, helpers and plugin end, sdk/server)
// and plugins/fsstorage/fsstorage: never the runtime nor the SDK's host end.
package main

import (
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(&storage{inner: fsstorage.New()}) }

// Command flowstate-plugin-jmstorage serves the in-memory (JobManager) checkpoint storage
// as a Flowstate plugin.
//
// It links only the SDK (its contract, its helpers and its plugin end, sdk/server) and its
// own package plugins/jmstorage/jmstorage: never the runtime, another plugin or the SDK's
// host end (sdk/host), which internal/deps checks.
package main

import (
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(jmstorage.New()) }

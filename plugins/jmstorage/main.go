// Command flowstate-plugin-jmstorage serves the in-memory (JobManager) checkpoint storage
// as a Flowstate plugin.
package main

import (
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/sdk/server"
)

func main() { server.Serve(jmstorage.New()) }

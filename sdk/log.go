package sdk

import "github.com/hashicorp/go-hclog"

// Logger returns the logger plugins log with: once the plugin's main has called
// server.Serve, JSON lines on stderr that the runner logs under the plugin's name; in the
// runner's own process, the runner's logger.
func Logger() hclog.Logger { return hclog.Default() }

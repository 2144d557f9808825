package monitor

import (
	"time"

	"github.com/flowstate/flowstate/sdk/host"
)

// PluginCalls returns the observer of plugin's gRPC calls (host.Config.Observer) that
// times each call for flowstate_plugin_callLatency_seconds: a unary call from start to
// answer, a stream from its opening to its end. On a nil Monitor it is nil.
func (m *Monitor) PluginCalls(plugin string) host.CallObserver {
	if m == nil {
		return nil
	}
	return callTimer{m: m, plugin: plugin}
}

// callTimer feeds a plugin's calls into the latency histogram.
type callTimer struct {
	m      *Monitor
	plugin string
}

// CallDone implements host.CallObserver.
func (c callTimer) CallDone(method string, took time.Duration, _ error) {
	c.m.ObservePluginCall(c.plugin, method, took)
}

// Message implements host.CallObserver; messages are not measured here.
func (callTimer) Message(string, bool) {}

package pluginhost

import (
	"sync/atomic"
	"time"

	"github.com/flowstate/flowstate/sdk/host"
)

// Observers makes a host.CallObserver for a plugin by name (see Host.Observe).
type Observers func(plugin string) host.CallObserver

// Observe makes every call into the host's plugin processes, those started already
// included, reported to the observer that observers makes for the plugin; nil stops the
// reports. A job's monitor times the plugin calls this way.
func (h *Host) Observe(observers Observers) {
	if observers == nil {
		h.observers.Store(nil)
		return
	}
	h.observers.Store(&observers)
}

// forwarder is the host.CallObserver of one plugin's processes: it passes the reports on
// to whatever observer the host has now.
type forwarder struct {
	h      *Host
	plugin string
}

func (f forwarder) current() host.CallObserver {
	if o := f.h.observers.Load(); o != nil {
		return (*o)(f.plugin)
	}
	return nil
}

// CallDone implements host.CallObserver.
func (f forwarder) CallDone(method string, took time.Duration, err error) {
	if o := f.current(); o != nil {
		o.CallDone(method, took, err)
	}
}

// Message implements host.CallObserver.
func (f forwarder) Message(method string, sent bool) {
	if o := f.current(); o != nil {
		o.Message(method, sent)
	}
}

// observers holds the host's Observers; the zero value holds none.
type observers = atomic.Pointer[Observers]

package monitor

import (
	"math"
	"testing"
	"time"
)

// TestPluginCalls: every call the host's observer reports is timed by plugin and method.
func TestPluginCalls(t *testing.T) {
	m := New("orders", Options{})
	o := m.PluginCalls("hashmap")
	const gets = 3
	for range gets {
		o.Message("StateBackend/Get", true)
		o.CallDone("StateBackend/Get", 2*time.Millisecond, nil)
	}
	o.CallDone("StateBackend/Pipeline", time.Second, nil)
	fams := scrape(t, serve(t, m).URL)
	get := findSeries(t, fams, MetricPluginCallLatency, "job=orders", "plugin=hashmap", "method=StateBackend/Get").Histogram
	if get.GetSampleCount() != gets || math.Abs(get.GetSampleSum()-gets*0.002) > 1e-9 {
		t.Errorf("StateBackend/Get: %d samples summing %gs, want %d summing %gs", get.GetSampleCount(), get.GetSampleSum(), gets, gets*0.002)
	}
	pipe := findSeries(t, fams, MetricPluginCallLatency, "job=orders", "plugin=hashmap", "method=StateBackend/Pipeline").Histogram
	if pipe.GetSampleCount() != 1 {
		t.Errorf("StateBackend/Pipeline timed %d times, want once", pipe.GetSampleCount())
	}
	var nilMonitor *Monitor
	if o := nilMonitor.PluginCalls("x"); o != nil {
		t.Errorf("a nil Monitor's observer: %v, want none", o)
	}
}

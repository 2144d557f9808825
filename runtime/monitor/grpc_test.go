package monitor

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestPluginDialOptions times real gRPC calls, unary and streaming, through the dial
// options, by plugin and method.
func TestPluginDialOptions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(ln)
	defer srv.Stop()

	m := New("orders", Options{})
	conn, err := grpc.NewClient(ln.Addr().String(), append(m.PluginDialOptions("hashmap"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx := context.Background()
	const checks = 3
	for range checks {
		if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	// A server stream, timed once when it ends: here when the client cancels it.
	wctx, cancel := context.WithCancel(ctx)
	w, err := client.Watch(wctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil { // the current status
		t.Fatal(err)
	}
	cancel()
	for {
		if _, err := w.Recv(); err != nil {
			break
		}
	}

	fams := scrape(t, serve(t, m).URL)
	check := findSeries(t, fams, MetricPluginCallLatency, "job=orders", "plugin=hashmap", "method=Health/Check").Histogram
	if check.GetSampleCount() != checks {
		t.Errorf("Health/Check timed %d times, want %d", check.GetSampleCount(), checks)
	}
	watch := findSeries(t, fams, MetricPluginCallLatency, "job=orders", "plugin=hashmap", "method=Health/Watch").Histogram
	if watch.GetSampleCount() != 1 {
		t.Errorf("Health/Watch timed %d times, want once, when its stream ended", watch.GetSampleCount())
	}
	var nilMonitor *Monitor
	if opts := nilMonitor.PluginDialOptions("x"); opts != nil {
		t.Errorf("a nil Monitor's dial options: %v, want none", opts)
	}
}

func TestMethodName(t *testing.T) {
	for in, want := range map[string]string{
		"/flowstate.plugin.v1.StateBackend/Get": "StateBackend/Get",
		"/Info/Describe":                        "Info/Describe",
		"odd":                                   "odd",
	} {
		if got := methodName(in); got != want {
			t.Errorf("methodName(%q) = %q, want %q", in, got, want)
		}
	}
}

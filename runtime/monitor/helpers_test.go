package monitor

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// serve starts an HTTP server running Handler(m).
func serve(t *testing.T, m *Monitor) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Handler(m))
	t.Cleanup(srv.Close)
	return srv
}

// scrape GETs /metrics and parses Prometheus' text format with the client library's own
// parser, checking every name is a classic (legacy) Prometheus name.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: Content-Type %q, want Prometheus' text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample returns the value of the series of family name whose labels are exactly labels
// (as "k=v" pairs), failing when there is not exactly one.
func sampleValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	m := findSeries(t, fams, name, labels...)
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	t.Fatalf("%s{%s}: neither gauge nor counter", name, strings.Join(labels, ","))
	return 0
}

func findSeries(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing from /metrics", name)
	}
	want := append([]string(nil), labels...)
	sort.Strings(want)
	var found []*dto.Metric
	for _, m := range f.Metric {
		var got []string
		for _, l := range m.Label {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(got)
		if strings.Join(got, ",") == strings.Join(want, ",") {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("metric %s{%s}: %d series, want 1 (family: %v)", name, strings.Join(labels, ","), len(found), f)
	}
	return found[0]
}

// getJSON GETs path and decodes the body into a generic value, so the test sees the field
// names as they are on the wire, not through the package's types.
func getJSONT(t *testing.T, url string, wantCode int) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s: %s, want %d", url, resp.Status, wantCode)
	}
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return v
}

// path walks a decoded JSON value: keys of objects and indexes ("0", "1", ...) of arrays.
func jpath(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				t.Fatalf("JSON %s: no field %q (fields: %v)", strings.Join(keys[:i], "."), k, fieldNames(x))
			}
		case []any:
			n := 0
			for _, c := range k {
				n = n*10 + int(c-'0')
			}
			if n >= len(x) {
				t.Fatalf("JSON %s: index %d of %d", strings.Join(keys[:i], "."), n, len(x))
			}
			v = x[n]
		default:
			t.Fatalf("JSON %s: %T has no field %q", strings.Join(keys[:i], "."), v, k)
		}
	}
	return v
}

func fieldNames(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// num returns a JSON number at keys.
func num(t *testing.T, v any, keys ...string) float64 {
	t.Helper()
	return jsonAs[float64](t, v, keys...)
}

// str returns a JSON string at keys.
func str(t *testing.T, v any, keys ...string) string {
	t.Helper()
	return jsonAs[string](t, v, keys...)
}

// jsonAs returns the JSON value at keys, which must be a T.
func jsonAs[T any](t *testing.T, v any, keys ...string) T {
	t.Helper()
	x, ok := jpath(t, v, keys...).(T)
	if !ok {
		t.Fatalf("JSON %s: %v is not a %T", strings.Join(keys, "."), jpath(t, v, keys...), x)
	}
	return x
}

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/flowstate/flowstate/internal/wordcheck"
)

var endpointLine = regexp.MustCompile(`control endpoint and web page: http://([0-9.:]+)/`)

// metricValue returns the value of the metric family name with label job=job in the
// Prometheus text exposition body.
func metricValue(t *testing.T, body, name, job string) (float64, bool) {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	f, ok := families[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "job" && l.GetValue() == job {
				switch {
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue(), true
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(b)
}

// TestMetricsAndCheckpointStatistics scrapes /metrics of a running word count whose
// storage makes every fourth checkpoint hang past the checkpoint timeout: the completed
// checkpoints rise between two scrapes, the failed one is counted, the REST answer names
// its failure, and the sizes the REST API reports are those `checkpoints list` reports.
func TestMetricsAndCheckpointStatistics(t *testing.T) {
	dir := t.TempDir()
	input, output, cfg := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out"), filepath.Join(dir, "c.yaml")
	if err := wordcheck.WriteText(input, 2<<20, 5000, 5); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, cfg, map[string]any{
		"state.backend.type":                                   "hashmap",
		"execution.checkpointing.storage":                      "faultstorage",
		"execution.checkpointing.dir":                          filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.faultstorage.fault":           "hang",
		"execution.checkpointing.faultstorage.every":           4,
		"execution.checkpointing.faultstorage.delay":           "1500ms",
		"execution.checkpointing.interval":                     "100ms",
		"execution.checkpointing.timeout":                      "500ms",
		"execution.checkpointing.tolerable-failed-checkpoints": 1000,
		"execution.checkpointing.num-retained":                 1000,
		"restart-strategy.type":                                "none",
		"job.name":                                             "wc",
		"job.parallelism":                                      2,
		"job.input":                                            input,
		"job.output":                                           output,
		"job.rate":                                             8000,
	})
	r := startRunner(t, "run", "--config", cfg, "--plugin-dir", faultPluginDir(t))
	addr := waitMatch(t, r, endpointLine, time.Minute)[1]
	metrics := "http://" + addr + "/metrics"
	// Wait for the events: a completed checkpoint, then more, and a failed one.
	var first, completed, failed float64
	waitFor(t, r, "/metrics to count a completed checkpoint, then more, and a failed one", time.Minute, func(string) error {
		body := httpGet(t, metrics)
		completed, _ = metricValue(t, body, "flowstate_job_numberOfCompletedCheckpoints", "wc")
		failed, _ = metricValue(t, body, "flowstate_job_numberOfFailedCheckpoints", "wc")
		if first == 0 {
			first = completed
		}
		if first == 0 || completed <= first || failed < 1 {
			return fmt.Errorf("completed %v (first seen %v), failed %v", completed, first, failed)
		}
		return nil
	})
	body := httpGet(t, metrics)
	for _, name := range []string{"flowstate_job_lastCheckpointDuration", "flowstate_job_lastCheckpointSize", "flowstate_job_uptime", "flowstate_job_numRestarts"} {
		if _, ok := metricValue(t, body, name, "wc"); !ok {
			t.Errorf("/metrics has no %s for job wc", name)
		}
	}

	var stats struct {
		Counts struct{ Completed, Failed int64 } `json:"counts"`
		Latest struct {
			Failed *struct {
				ID             int64  `json:"id"`
				FailureMessage string `json:"failure_message"`
			} `json:"failed"`
		} `json:"latest"`
		History []struct {
			ID        int64  `json:"id"`
			Status    string `json:"status"`
			StateSize int64  `json:"state_size"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+addr+"/jobs/wc/checkpoints")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Latest.Failed == nil || stats.Latest.Failed.ID%4 != 0 || !strings.Contains(stats.Latest.Failed.FailureMessage, "execution.checkpointing.timeout") {
		t.Fatalf("latest failed checkpoint %+v: want a multiple of 4 that expired", stats.Latest.Failed)
	}
	out, err := runnerCmd(t, "checkpoints", "list", "--config", cfg, "--json", "--plugin-dir", faultPluginDir(t))
	if err != nil {
		t.Fatalf("checkpoints list: %v\n%s", err, out)
	}
	var listed []struct {
		ID   int64 `json:"id"`
		Size int64 `json:"size"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("checkpoints list --json: %v\n%s", err, out)
	}
	sizes := map[int64]int64{}
	for _, c := range listed {
		sizes[c.ID] = c.Size
	}
	matched := 0
	for _, h := range stats.History {
		if h.Status != "COMPLETED" {
			continue
		}
		size, ok := sizes[h.ID]
		if !ok {
			t.Fatalf("REST lists completed checkpoint %d, checkpoints list does not: %s", h.ID, out)
		}
		if size != h.StateSize {
			t.Fatalf("checkpoint %d: REST state_size %d, checkpoints list size %d", h.ID, h.StateSize, size)
		}
		matched++
	}
	if matched == 0 {
		t.Fatalf("no completed checkpoint in the REST history: %+v", stats.History)
	}
	if stop, err := runnerCmd(t, "stop", "--config", cfg, "--plugin-dir", faultPluginDir(t)); err != nil {
		t.Fatalf("stop: %v\n%s", err, stop)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
	t.Logf("completed %v -> %v, failed %v; %d checkpoints matched checkpoints list", first, completed, failed, matched)
}

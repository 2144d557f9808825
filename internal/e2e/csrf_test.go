package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flowstate/flowstate/internal/testbin"
)

// attackPage is a page on another origin (another port of 127.0.0.1) that tries what a
// page open in the operator's browser could try against the job's control endpoint
// (%[1]s): the requests a browser sends without a CORS preflight (a text/plain cancel, a
// form-encoded savepoint), and a cross-origin read of the job overview. It writes what
// came back into window.attack once every attempt has settled.
const attackPage = `<!doctype html><title>attack</title><script>
(async () => {
  const ep = "http://%[1]s";
  const out = {};
  const attempt = async (name, f) => { try { const r = await f(); out[name] = "answered " + r.type + " " + r.status; } catch (e) { out[name] = "failed: " + e; } };
  await attempt("cancel", () => fetch(ep + "/v1/cancel", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"job":"wc"}'}));
  await attempt("savepoint", () => fetch(ep + "/v1/savepoint", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: '{"job":"wc","stop":true}'}));
  let read = "";
  try { read = await (await fetch(ep + "/jobs/overview")).text(); } catch (e) { read = "failed: " + e; }
  out.overview = read;
  window.attack = out;
})();
</script>`

// TestForeignPageCannotDriveTheJob opens, in headless Chromium, a page served from another
// port that sends the job's control endpoint the requests a browser sends across origins
// without asking (as a page in the operator's browser would): the job keeps running and
// checkpointing, no savepoint is written, and the page cannot read the job's overview. The
// same job then stops through the CLI.
func TestForeignPageCannotDriveTheJob(t *testing.T) {
	bin := testbin.NeedChromium(t)
	savepoints := filepath.Join(t.TempDir(), "savepoints")
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 3000, map[string]any{
		"execution.checkpointing.savepoint-dir": savepoints,
	})
	r := s.run(t)
	addr := controlAddress(t, r)
	waitOutput(t, r, "checkpoint complete", time.Minute)

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, attackPage, addr)
	}))
	defer evil.Close()
	bctx := testbin.Browser(t, bin)
	if err := chromedp.Do(bctx, chromedp.Navigate(evil.URL)); err != nil {
		t.Fatalf("the foreign page: %v", err)
	}
	res, err := chromedp.Run(bctx, chromedp.Poll[map[string]string](`window.attack`, chromedp.WithPollingTimeout(time.Minute)))
	if err != nil {
		t.Fatalf("the foreign page: %v\n%s", err, tail(r.out.String(), 20))
	}
	t.Logf("the foreign page's attempts: %v", res)
	if strings.Contains(res["overview"], `"jobs"`) || strings.Contains(res["overview"], `"wc"`) {
		t.Fatalf("the foreign page read the job's overview: %s", res["overview"])
	}
	// The job goes on: two more checkpoints complete after the attempts were answered.
	waitMatches(t, r, completedLine, r.count(completedLine)+2, time.Minute)
	// The browser sent both POSTs (an opaque answer is the server's): the test is only
	// meaningful if they reached the endpoint.
	for _, name := range []string{"cancel", "savepoint"} {
		if !strings.HasPrefix(res[name], "answered opaque") {
			t.Fatalf("the page's %s request did not reach the endpoint: %q", name, res[name])
		}
	}
	if entries, err := os.ReadDir(savepoints); err == nil && len(entries) > 0 {
		t.Fatalf("the foreign page made the runner write a savepoint: %v", entries)
	}
	if out := retried(t, r, "stop", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "job cancelled") {
		t.Fatalf("stop: %s", out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
}

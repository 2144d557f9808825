package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// TestWebPageOfARunningJob opens the page a real runner serves for a running word count
// in headless Chromium and waits for what an operator looks for: the job running, its
// two plugins with the pids the runner started them with, records flowing through its
// operators, and a completed checkpoint row. It saves a screenshot in the test's
// temporary directory; with FLOWSTATE_UPDATE_SCREENSHOT=1 also as docs/images/web-ui.png,
// the README's picture.
func TestWebPageOfARunningJob(t *testing.T) {
	bin := testbin.NeedChromium(t)
	dir := t.TempDir()
	input, cfg := filepath.Join(dir, "in.txt"), filepath.Join(dir, "c.yaml")
	if err := wordcheck.WriteText(input, 4<<20, 5000, 9); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, cfg, map[string]any{
		"state.backend.type":               "hashmap",
		"execution.checkpointing.storage":  "filesystem",
		"execution.checkpointing.dir":      filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.interval": "200ms",
		"job.name":                         "wc",
		"job.parallelism":                  2,
		"job.input":                        input,
		"job.output":                       filepath.Join(dir, "out"),
		"job.rate":                         5000, // long enough to watch
	})
	r := startRunner(t, "run", "--config", cfg, "--plugin-dir", testbin.PluginDir(t))
	addr := waitMatch(t, r, endpointLine, time.Minute)[1]
	backendPid := 0
	waitFor(t, r, "the hashmap plugin process", time.Minute, func(string) error {
		if backendPid = pluginOf(r.cmd.Process.Pid, "hashmap"); backendPid == 0 {
			return errors.New("none")
		}
		return nil
	})

	bctx := testbin.Browser(t, bin)
	if err := chromedp.Do(bctx,
		chromedp.Navigate("http://"+addr+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#history tr[data-status="COMPLETED"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#plugins tr[data-plugin="hashmap"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#plugins tr[data-plugin="fsstorage"]`)),
	); err != nil {
		t.Fatalf("the page of the running job: %v\n%s", err, tail(r.out.String(), 20))
	}
	if got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#job-name`))); err != nil || got != "wc" {
		t.Fatalf("job name on the page: %q, %v", got, err)
	}
	if got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#plugins tr[data-plugin="hashmap"]`))); err != nil || !strings.Contains(got, strconv.Itoa(backendPid)) {
		t.Fatalf("hashmap's row shows %q (%v), want its pid %d", got, err, backendPid)
	}
	// The history fills as checkpoints complete while the page is open.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](
		`document.querySelectorAll('#history tr[data-status="COMPLETED"]').length >= 4`,
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("the page's history never showed four completed checkpoints: %v", err)
	}
	// Records flow: the page's records-in of the keyed operator becomes positive.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](
		`(() => { const c = document.querySelector('#operators tr[data-operator="count"] td.records-in'); return !!c && parseInt(c.textContent.replace(/[^0-9]/g, '')) > 0 })()`,
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("the page never showed records into operator count: %v", err)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(dir, "web-ui-running-job.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the running job's page: %s (%d bytes)", shot, len(png))
	if os.Getenv("FLOWSTATE_UPDATE_SCREENSHOT") == "1" {
		docs := filepath.Join("..", "..", "docs", "images", "web-ui.png")
		if err := os.WriteFile(docs, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", docs)
	}
	if out, err := runnerCmd(t, "stop", "--config", cfg, "--plugin-dir", testbin.PluginDir(t)); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
}

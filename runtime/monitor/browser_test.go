package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// TestWebPageInBrowser loads the job page of a running job in headless Chromium while the
// job reports checkpoints, and waits for what Flink's checkpoint tab shows: a checkpoint
// that completes after the page loaded, and a failed one with its reason. It saves a
// screenshot in the test's temporary directory. (internal/e2e's TestWebPageOfARunningJob
// takes the page of a real job, and docs/images/web-ui.png.)
func TestWebPageInBrowser(t *testing.T) {
	bin := testbin.NeedChromium(t)

	// The scenario's checkpoints, then one that two subtasks have acknowledged when the
	// page opens, and completes while it is open. The job started a little over three
	// minutes ago, so that last checkpoint was triggered just now; the Monitor's clock
	// then follows the real one.
	before := testCheckpoints[:len(testCheckpoints)-1]
	last := cpEvent{id: before[len(before)-1].id + 1, at: before[len(before)-1].at + 10*time.Second, full: 66_000, added: 7_300}
	last.acks = fullAcks(last.full, last.added, 1500*time.Millisecond)
	var offset atomic.Int64
	offset.Store(int64(-last.at - 2*time.Second))
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	m := New("orders", Options{Clock: now})
	start := now()
	m.JobStarted(JobInfo{
		Type: "aggregate", ConfigFile: "/etc/flowstate/orders.yaml", MaxParallelism: 128,
		Tasks: testTasks, Checkpointing: testSettings, Plugins: testPlugins,
	})
	offset.Store(0)
	subs := map[string]*Subtask{}
	for _, k := range []string{"source/0", "source/1", "count/0", "count/1", "sink/0", "sink/1"} {
		op, idx := splitName(k)
		subs[k] = m.Subtask(op, int(idx[0]-'0'))
	}
	records := func(n int) {
		for i := range 2 {
			s := fmt.Sprint(i)
			subs["source/"+s].RecordsOut(n * (5 + i))
			subs["count/"+s].RecordsIn(n * (5 + i))
			subs["count/"+s].RecordsOut(n * (1 + i))
			subs["sink/"+s].RecordsIn(n * (1 + i))
		}
	}
	records(20_000)
	subs["count/0"].SetStateSize(31_000)
	subs["count/1"].SetStateSize(32_500)
	subs["source/1"].SplitPending("in.a", 1234)
	subs["source/1"].EmitEventTimeLag(250 * time.Millisecond)
	subs["sink/0"].Committed(900, 1, 40*time.Millisecond)
	for _, e := range before {
		feed(m, start, e)
	}
	inProgress := last
	inProgress.acks = last.acks[:2]
	feed(m, start, inProgress)

	srv := serve(t, m)

	dir := t.TempDir()
	bctx := testbin.Browser(t, bin)

	row := func(id int64, status string) string {
		return fmt.Sprintf(`#history tr[data-checkpoint-id="%d"][data-status="%s"]`, id, status)
	}
	// The page draws the job and the checkpoint in progress.
	if err := chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(row(last.id, StatusInProgress))),
		chromedp.WaitVisible(chromedp.CSS(`#plugins tr[data-plugin="hashmap"]`)),
	); err != nil {
		t.Fatalf("load the page of a running job: %v", err)
	}
	for sel, want := range map[string]string{
		`#connectors tr[data-connector="source/1"] td.pending`: "1,234",
		`#connectors tr[data-connector="sink/0"] td.committed`: "900",
		`#splits tr[data-split="in.a"]`:                        "1,234",
	} {
		if got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel))); err != nil || !strings.Contains(got, want) {
			t.Errorf("%s shows %q (%v), want %q", sel, got, err, want)
		}
	}
	if got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#job-name`))); err != nil || got != "orders" {
		t.Fatalf("job name on the page: %q, %v", got, err)
	}
	if got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#plugins tr[data-plugin="hashmap"]`))); err != nil || !strings.Contains(got, "4242") || !strings.Contains(got, "1.2.0") {
		t.Fatalf("hashmap's row shows %q (%v), want its pid 4242 and version 1.2.0", got, err)
	}

	// While the page is open, the checkpoint completes and the next one fails.
	records(3_000)
	for _, a := range last.acks[2:] {
		m.SubtaskAcknowledged(last.id, a.task, a.subtask, dataflow.AckStats{
			Sync: a.sync, Async: a.async, Alignment: a.align, StartDelay: a.wait, StateSize: a.size, CheckpointedSize: a.added,
		})
	}
	m.CheckpointCompleted(last.id, now(), dataflow.CompletedStats{StateSize: last.full, CheckpointedSize: last.added, ExternalPath: last.path()})
	if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(row(last.id, StatusCompleted)))); err != nil {
		t.Fatalf("the page never showed checkpoint %d completed: %v", last.id, err)
	}
	failedID := last.id + 1
	reason := fmt.Sprintf("checkpoint %d declined: operator count subtask 0: upload snapshot: fsstorage: write chk-%d/shared/3f2a: input/output error (injected storage fault)", failedID, failedID)
	m.CheckpointTriggered(failedID, dataflow.KindCheckpoint, now())
	m.SubtaskAcknowledged(failedID, "source", 0, dataflow.AckStats{Sync: time.Millisecond, StateSize: 80, CheckpointedSize: 80})
	m.CheckpointFailed(failedID, now(), reason)
	failure := row(failedID, StatusFailed) + ` td.failure`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf(
		`(document.querySelector(%q) || {}).textContent === %q`, failure, reason),
		chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		t.Fatalf("the page never showed checkpoint %d failed with its reason: %v", failedID, err)
	}

	// Open a completed checkpoint's subtask details, as a user diagnosing it would.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(row(last.id, StatusCompleted))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-detail-for="%d"] table`, last.id))),
	); err != nil {
		t.Fatalf("open checkpoint %d's subtask details: %v", last.id, err)
	}
	// Every subtask acknowledged: each detail row shows its sync and async times.
	detail, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(fmt.Sprintf(`tr[data-detail-for="%d"]`, last.id))))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range last.acks {
		if want := fmt.Sprintf("%d ms", a.async.Milliseconds()); !strings.Contains(detail, want) {
			t.Errorf("checkpoint %d's details %q: no async time %q of %s/%d", last.id, detail, want, a.task, a.subtask)
		}
	}

	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(dir, "web-ui.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

}

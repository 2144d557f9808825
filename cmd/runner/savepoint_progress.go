package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/progress"
)

// savepointPoll is how often the progress of a savepoint is asked for.
const savepointPoll = 250 * time.Millisecond

// followSavepoint shows the progress of the savepoint the runner of to takes while the
// caller waits for it: it asks the job's checkpoint statistics every savepointPoll for the
// savepoint in progress and shows the bytes it has uploaded (uploaded_size) against the
// full size of the latest completed checkpoint, the state the savepoint writes about (a
// bar on a terminal, log lines otherwise). The returned function stops it, with the
// savepoint's outcome.
func followSavepoint(ctx context.Context, to jobTarget, log hclog.Logger) (done func(err error)) {
	pollCtx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	var p *progress.Progress
	var shown int64
	go func() {
		defer close(finished)
		tick := time.NewTicker(savepointPoll)
		defer tick.Stop()
		for {
			if st, ok := savepointStats(pollCtx, to, false); ok {
				if p == nil {
					p = progress.New(progress.Options{Title: "savepoint", Total: st.total, Logger: log})
				}
				if st.uploaded > shown {
					p.Add(st.uploaded - shown)
					shown = st.uploaded
				}
			}
			select {
			case <-pollCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func(err error) {
		cancel()
		<-finished
		if p == nil {
			return // done before it was seen in progress: nothing long to show
		}
		if err == nil { // the bytes uploaded after the last look
			if st, ok := savepointStats(ctx, to, true); ok && st.uploaded > shown {
				p.Add(st.uploaded - shown)
			}
		}
		p.Finish(err)
	}
}

// savepointProgress is what the statistics say of the savepoint in progress.
type savepointProgress struct{ uploaded, total int64 }

// savepointStats finds the savepoint in progress in the job's checkpoint statistics, or
// with completed the latest completed one; false when there is none or the runner did not
// answer.
func savepointStats(ctx context.Context, to jobTarget, completed bool) (savepointProgress, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, to.client.URL("/jobs/"+url.PathEscape(to.job)+"/checkpoints"), nil)
	if err != nil {
		return savepointProgress{}, false
	}
	resp, err := to.client.HTTP().Do(req)
	if err != nil {
		return savepointProgress{}, false
	}
	defer resp.Body.Close()
	var stats monitor.CheckpointingStatistics
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&stats) != nil {
		return savepointProgress{}, false
	}
	var total int64
	if c := stats.Latest.Completed; c != nil {
		total = c.StateSize
	}
	if completed {
		if c := stats.Latest.Savepoint; c != nil {
			return savepointProgress{uploaded: c.UploadedSize, total: total}, true
		}
		return savepointProgress{}, false
	}
	for _, c := range stats.History {
		if c.Status == monitor.StatusInProgress && c.IsSavepoint {
			return savepointProgress{uploaded: c.UploadedSize, total: total}, true
		}
	}
	return savepointProgress{}, false
}

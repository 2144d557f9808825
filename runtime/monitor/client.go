package monitor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Status is what `runner status` reports about a job: whether it runs, and if it does,
// its details and checkpoint statistics as its runner serves them.
type Status struct {
	Job     string `json:"job"`
	Running bool   `json:"running"`
	// Address is the control endpoint asked; URL the job's web page there.
	Address     string                   `json:"address"`
	URL         string                   `json:"url"`
	Details     *JobDetails              `json:"details,omitempty"`
	Checkpoints *CheckpointingStatistics `json:"checkpoints,omitempty"`
	// Reason says why the job is known not to run, when no runner could be asked.
	Reason string `json:"reason,omitempty"`
}

// GetStatus asks the control endpoint at endpoint (its URL, http://host:port or https://)
// about job. A job whose runner does not answer (nothing listens there) is reported not
// running, with no error; an endpoint that answers for another job, or answers wrongly, is
// an error.
func GetStatus(ctx context.Context, client *http.Client, endpoint, job string) (*Status, error) {
	if client == nil {
		client = http.DefaultClient
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("control endpoint %q: %w", endpoint, err)
	}
	base := strings.TrimSuffix(endpoint, "/") + "/"
	st := &Status{Job: job, Address: u.Host, URL: base}
	path := base + "jobs/" + url.PathEscape(job)
	st.Details = &JobDetails{}
	if err := getJSON(ctx, client, path, st.Details); err != nil {
		if refused(err) {
			st.Details = nil
			return st, nil
		}
		return nil, err
	}
	st.Checkpoints = &CheckpointingStatistics{}
	if err := getJSON(ctx, client, path+"/checkpoints", st.Checkpoints); err != nil {
		return nil, err
	}
	st.Running = !terminal(st.Details.State)
	return st, nil
}

// refused reports whether err says nothing listens at the address.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("control endpoint: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("control endpoint: GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e ErrorResponse
		if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
			return fmt.Errorf("control endpoint: GET %s: %s: %s", u, resp.Status, strings.Join(e.Errors, "; "))
		}
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("control endpoint: GET %s: %s: what answers there serves no job statistics (a runner without them, or another program)", u, resp.Status)
		}
		return fmt.Errorf("control endpoint: GET %s: %s", u, resp.Status)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("control endpoint: GET %s: %w", u, err)
	}
	return nil
}

// StatusCheckpoints is how many of the most recent checkpoints WriteStatus lists.
const StatusCheckpoints = 5

// WriteStatus writes st for a person to read.
func WriteStatus(w io.Writer, st *Status) error {
	if st.Details == nil {
		why := st.Reason
		if why == "" {
			why = "nothing answers at " + st.Address
		}
		_, err := fmt.Fprintf(w, "job %s: not running (%s)\n", st.Job, why)
		return err
	}
	d, cp := st.Details, st.Checkpoints
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("job %s: %s", d.Name, d.State)
	if d.Uptime > 0 {
		p(", up %s", HumanDuration(time.Duration(d.Uptime)*time.Millisecond))
	}
	p("\n")
	p("web page, REST and /metrics:\t%s\n", st.URL)
	p("restarts:\t%d\n", d.NumRestarts)
	for _, pl := range d.Plugins {
		pid := "in-process"
		if pl.Pid > 0 {
			pid = fmt.Sprintf("pid %d", pl.Pid)
		}
		p("plugin %s:\t%s, %s, version %s, %d restarts\n", pl.Name, strings.Join(pl.Roles, " and "), pid, orDash(pl.Version), pl.Restarts)
	}
	p("\nOPERATOR\tPARALLELISM\tRECORDS IN\tRECORDS OUT\tIN/S\tOUT/S\n")
	for _, v := range d.Vertices {
		p("%s\t%d\t%d\t%d\t%.1f\t%.1f\n", v.Name, v.Parallelism, v.Metrics.ReadRecords, v.Metrics.WriteRecords,
			v.ReadRecordsPerSecond, v.WriteRecordsPerSecond)
	}
	writeConnectors(p, d.Vertices)
	c := cp.Counts
	p("\ncheckpoints: %d completed, %d failed, %d in progress, %d restored\n", c.Completed, c.Failed, c.InProgress, c.Restored)
	if r := cp.Latest.Restored; r != nil {
		p("restored from %d at %s: %s\n", r.ID, time.UnixMilli(r.RestoreTimestamp).Format(time.RFC3339), r.ExternalPath)
	}
	if len(cp.History) > 0 {
		p("\nID\tSTATUS\tTYPE\tTRIGGERED\tDURATION\tSIZE\tADDED\tFAILURE\n")
		for _, h := range cp.History[:min(len(cp.History), StatusCheckpoints)] {
			dur := "-"
			if h.EndToEndDuration >= 0 {
				dur = HumanDuration(time.Duration(h.EndToEndDuration) * time.Millisecond)
			}
			p("%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", h.ID, h.Status, strings.ToLower(h.CheckpointType),
				time.UnixMilli(h.TriggerTimestamp).Format(time.RFC3339), dur, h.StateSize, h.CheckpointedSize,
				oneLine(h.FailureMessage))
		}
	}
	return tw.Flush()
}

// StatusSplits is how many splits WriteStatus lists: those with the most pending records.
const StatusSplits = 10

// writeConnectors writes what the subtasks' connectors measured: a row per measured
// subtask (a source's pending records and emit lag, a sink's commits), and the splits with
// the most pending records.
func writeConnectors(p func(string, ...any), vertices []VertexDetails) {
	type split struct {
		op      string
		subtask int
		SplitMetrics
	}
	var splits []split
	header := false
	for _, v := range vertices {
		for _, s := range v.Subtasks {
			c := s.Connector
			if c == nil {
				continue
			}
			if !header {
				p("\nCONNECTOR\tSUBTASK\tPENDING RECORDS\tEMIT LAG\tCOMMITS\tRECORDS COMMITTED\tBATCHES\tLAST COMMIT\tAVG COMMIT\n")
				header = true
			}
			pending, lag := "-", "-"
			if c.PendingRecords != nil {
				pending = fmt.Sprint(*c.PendingRecords)
			}
			if c.CurrentEmitEventTimeLag >= 0 {
				lag = HumanDuration(time.Duration(c.CurrentEmitEventTimeLag) * time.Millisecond)
			}
			commits, records, batches, last, avg := "-", "-", "-", "-", "-"
			if cm := c.Commits; cm != nil {
				commits, records, batches = fmt.Sprint(cm.Commits), fmt.Sprint(cm.Records), fmt.Sprint(cm.Batches)
				last = HumanDuration(time.Duration(cm.LastLatency) * time.Millisecond)
				avg = HumanDuration(time.Duration(cm.AverageLatency) * time.Millisecond)
			}
			p("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, s.Subtask, pending, lag, commits, records, batches, last, avg)
			for _, sp := range c.Splits {
				splits = append(splits, split{v.Name, s.Subtask, sp})
			}
		}
	}
	if len(splits) == 0 {
		return
	}
	slices.SortStableFunc(splits, func(a, b split) int { return cmp.Compare(b.PendingRecords, a.PendingRecords) })
	p("\nSPLIT\tCONNECTOR\tSUBTASK\tPENDING RECORDS\n")
	for _, sp := range splits[:min(len(splits), StatusSplits)] {
		p("%s\t%s\t%d\t%d\n", sp.Split, sp.op, sp.subtask, sp.PendingRecords)
	}
	if len(splits) > StatusSplits {
		p("(%d more splits; GET /metrics has them all)\n", len(splits)-StatusSplits)
	}
}

// HumanDuration rounds d for reading: milliseconds under a second, then seconds.
func HumanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a failure message on its table row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

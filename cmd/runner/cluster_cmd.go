package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/cluster"
	"github.com/flowstate/flowstate/runtime/config"
	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
)

// In distributed mode (cluster.enabled) status, savepoint and stop speak to the job's
// group through its NATS KV bucket rather than to one runner's control endpoint: any
// machine that reaches NATS with the configuration's credentials drives the job, and
// every runner of it, wherever they run, takes part.

// distributedJob returns the configuration of file when it runs its job in distributed
// mode (nil otherwise), with the job's name.
func distributedJob(file, jobName string) (*config.Config, string, error) {
	if file == "" {
		return nil, "", nil
	}
	cfg, err := config.LoadWith(file, nil)
	if err != nil || !cfg.Cluster.Enabled {
		return nil, "", nil // the usual path reports a bad file
	}
	if jobName == "" {
		jobName = jobSpec(cfg).Name
	}
	return cfg, jobName, nil
}

// withGroup connects to the NATS of cfg and calls f with its JetStream context.
func withGroup(ctx context.Context, cfg *config.Config, job string, f func(js jetstream.JetStream) error) error {
	nc, js, err := natsjs.ConnFromConfig(cfg.NATS).Connect(ctx, fmt.Sprintf("the group of job %q", job))
	if err != nil {
		return err
	}
	defer nc.Close()
	return f(js)
}

// requestWait bounds how long savepoint and stop wait for the job's runners: every task's
// savepoint, and the manifest.
const requestWait = 10 * time.Minute

// clusterRequest asks the job's group for req and waits for its outcome; it prints the
// manifest's pointer, if any, as the last line of out.
func clusterRequest(cmd *cobra.Command, cfg *config.Config, job string, req cluster.Request) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), requestWait)
	defer cancel()
	return withGroup(ctx, cfg, job, func(js jetstream.JetStream) error {
		id, err := cluster.Submit(ctx, js, cfg.Cluster.Bucket, job, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "asked every runner of job %q (request %s); waiting for every task\n", job, id)
		o, err := cluster.Await(ctx, js, cfg.Cluster.Bucket, job, id)
		if err != nil {
			return err
		}
		if o.Err != "" {
			return fmt.Errorf("%s of job %q: %s", req.Kind, job, o.Err)
		}
		switch {
		case req.Drain:
			fmt.Fprintf(cmd.OutOrStdout(), "job %q drained: its output is committed and its runners leave; the manifest of its tasks' final savepoints:\n", job)
		case req.Kind == cluster.RequestStop && req.Savepoint:
			fmt.Fprintf(cmd.ErrOrStderr(), "job %q stopped: its runners leave; the manifest of its tasks' savepoints:\n", job)
		case req.Kind == cluster.RequestStop:
			fmt.Fprintf(cmd.OutOrStdout(), "job %q cancelled: its runners leave\n", job)
			return nil
		}
		fmt.Fprintln(cmd.OutOrStdout(), o.Manifest)
		return nil
	})
}

// clusterStatus prints the view of the job's group: its runners and every task.
func clusterStatus(cmd *cobra.Command, cfg *config.Config, job string, asJSON bool) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	return withGroup(ctx, cfg, job, func(js jetstream.JetStream) error {
		v, err := cluster.ReadView(ctx, js, cfg.Cluster.Bucket, job)
		if err != nil {
			return err
		}
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
		writeView(cmd.OutOrStdout(), v, time.Now())
		return nil
	})
}

// writeView prints v: a line for the job, a table of its runners, a table of its tasks.
func writeView(w io.Writer, v cluster.View, now time.Time) {
	held := 0
	for _, t := range v.Tasks {
		if t.Member != "" {
			held++
		}
	}
	fmt.Fprintf(w, "job %q (distributed): %d runners, %d of %d tasks held\n\n", v.Job, len(v.Members), held, len(v.Tasks))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNNER\tHOST\tPID\tCONTROL\tTASKS\tUPDATED")
	for _, m := range v.Members {
		var tasks []string
		for _, t := range m.Status.Tasks {
			tasks = append(tasks, t.Task)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", m.ID, m.Holder.Host, m.Holder.PID, orDash(m.Holder.Control),
			orDash(strings.Join(tasks, ",")), ago(now, m.Status.Updated))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tRUNNER\tSTATE\tEPOCH\tRECORDS\tLAG\tLAST CHECKPOINT")
	for _, t := range v.Tasks {
		state, records, lag, last := "UNCLAIMED", "-", "-", "-"
		if t.Member == "" && !t.Expires.IsZero() {
			state = "HOLDER GONE (lease expires in " + t.Expires.Sub(now).Round(100*time.Millisecond).String() + ")"
		}
		if s := t.Status; s != nil {
			state, records = s.State, fmt.Sprint(s.RecordsIn)
			if s.Lag >= 0 {
				lag = fmt.Sprint(s.Lag)
			}
			if c := s.LastCheckpoint; c != nil {
				last = fmt.Sprintf("%d, %s ago, %s", c.ID, now.Sub(c.Time).Round(time.Second), c.Pointer)
			}
		} else if t.Member != "" {
			state = "STARTING"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Task, orDash(t.Member), state, t.Epoch, records, lag, last)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return now.Sub(t).Round(100*time.Millisecond).String() + " ago"
}

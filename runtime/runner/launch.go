package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// The bounds of a cancelled run (SIGINT, SIGTERM, runner stop): the job gets ShutdownGrace
// to end, then its plugins are killed and it gets KillWait more; then Launch returns
// whatever its plugins do. With the plugin host's and the control endpoint's closing, a
// runner ends within 10 s of the signal.
const (
	ShutdownGrace = 5 * time.Second
	KillWait      = 2 * time.Second
)

// ErrNotEnded: a cancelled job did not end within ShutdownGrace, and its plugins were killed.
var ErrNotEnded = errors.New("the job did not end in time after it was cancelled")

// Launch runs one job the one way every job runs, whether `runner run` starts it or a Go
// program does through Environment.Execute: it serves the job's control endpoint
// (savepoint, stop, status, Prometheus metrics, checkpoint statistics in the shape of
// Flink's REST API, and the web page), records the endpoint's address with the job's
// lease, runs the job with the Executor, and bounds its end once ctx is cancelled.
type Launch struct {
	// Config is the resolved configuration; Host starts its plugins.
	Config *config.Config
	Host   *pluginhost.Host
	// Logger receives the run's log; nil discards it.
	Logger hclog.Logger
	// From is "" (fresh, or execution.state-recovery.path), FromLatest, FromLatestIfAny
	// or a pointer.
	From string
	// AllowNonRestoredState lets a restore drop the state of operators the job lacks.
	AllowNonRestoredState bool
	// Stats, if set, accumulates the state access counts of every attempt.
	Stats *dataflow.RunStats
	// OnCheckpoint, if set, is called after every completed checkpoint.
	OnCheckpoint func(c *checkpoint.Completed)
	// OnListening, if set, is called with the control endpoint's address and the file that
	// holds its token once the run holds its job's leases (Executor.OnOwned): a run another
	// runner's lease refuses never calls it, though its endpoint listened.
	OnListening func(addr, tokenFile string)
	// WaitForLease makes a run whose job another runner holds wait until that runner's
	// lease expires, then take it over (Executor.WaitForLease).
	WaitForLease bool
}

// Run runs job until it ends. Cancelling ctx suspends the job (its checkpoints stay, for
// --from latest); a `runner stop` through the control endpoint cancels it (the retention
// of execution.checkpointing.externalized-checkpoint-retention applies). Once ctx or the
// job is cancelled, the job gets ShutdownGrace to end before its plugins are killed; an
// error wrapping ErrNotEnded says so.
func (l *Launch) Run(ctx context.Context, job *dataflow.Job) error {
	log := l.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := l.Config.Control.CheckExposure(); err != nil {
		return err
	}
	m := monitor.New(job.Name, monitor.Options{})
	l.Host.Observe(m.PluginCalls)
	defer l.Host.Observe(nil)
	jobCtx, cancelJob := context.WithCancelCause(ctx)
	defer cancelJob(nil)
	c := l.Config.Control
	srv, err := control.Listen(control.Options{
		Address: c.Address, Job: job.Name, Cancel: func() { cancelJob(ErrJobCancelled) }, More: monitor.Handler(m),
		TokenFile: c.TokenFile, OpenReads: c.ReadsOpen(), CertFile: c.CertFile, KeyFile: c.KeyFile, AllowedHosts: c.AllowedHosts,
		CheckTarget: savepointTargetCheck(l.Config, job.Name),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	go m.Run(jobCtx)
	x := &Executor{
		Config: l.Config, Host: l.Host, Logger: log, Stats: l.Stats, OnCheckpoint: l.OnCheckpoint,
		AllowNonRestoredState: l.AllowNonRestoredState, Savepoints: srv.Savepoints(),
		ControlAddress: srv.Addr(), Monitor: m, WaitForLease: l.WaitForLease,
		OnOwned: func() { // named only once the run owns the job: a refused run's endpoint is closed at once
			log.Info("control endpoint listening", "address", srv.Addr(), "job", job.Name, "token_file", srv.TokenFile(), "access", c.Access())
			if l.OnListening != nil {
				l.OnListening(srv.Addr(), srv.TokenFile())
			}
		},
	}
	return l.bounded(jobCtx, log, func(ctx context.Context) error { return x.Run(ctx, job, l.From) })
}

// bounded returns run(ctx)'s error. Once ctx is cancelled it waits ShutdownGrace for run to
// return, then sends SIGKILL to the host's plugins and waits KillWait more; a job that had
// to be ended this way gives an error wrapping ErrNotEnded that says so.
func (l *Launch) bounded(ctx context.Context, log hclog.Logger, run func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- run(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := time.NewTimer(ShutdownGrace)
	defer grace.Stop()
	select {
	case err := <-errc:
		return err
	case <-grace.C:
	}
	killed := l.Host.KillNow()
	what := "no plugin process was running"
	if len(killed) > 0 {
		what = "killed its plugins with SIGKILL: " + strings.Join(killed, ", ")
	}
	log.Error(fmt.Sprintf("the job has not ended %s after it was cancelled: %s", ShutdownGrace, what))
	wait := time.NewTimer(KillWait)
	defer wait.Stop()
	select {
	case err := <-errc:
		return fmt.Errorf("%w (%s); %s; then it ended: %v", ErrNotEnded, ShutdownGrace, what, err)
	case <-wait.C:
		return fmt.Errorf("%w (%s); %s; it still had not ended %s later: exiting without it", ErrNotEnded, ShutdownGrace, what, KillWait)
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime"
)

// notRunningError says that no runner holds job, and how that is known.
type notRunningError struct{ job, msg string }

func (e *notRunningError) Error() string { return e.msg }

func notRunning(job, format string, args ...any) error {
	return &notRunningError{job, fmt.Sprintf(format, args...)}
}

// jobTarget is where savepoint and stop send their request.
type jobTarget struct {
	job, addr string
	// savepointDir is execution.checkpointing.savepoint-dir of the configuration file, ""
	// when it sets none.
	savepointDir string
}

// locateJob finds the control endpoint of the runner that holds job jobName ("": the job
// of the configuration file, job.name): the address recorded with the job's lease (in its checkpoint
// storage, or in its output directory). When the job has no lease record it falls back
// to the pinned rest.address and rest.port. Either way the endpoint checks the job's name
// and refuses a request meant for another job.
func locateJob(ctx context.Context, g *globalFlags, file, jobName string) (jobTarget, error) {
	quiet := *g // the plugins' start and stop are not news here
	if quiet.logLevel == "info" {
		quiet.logLevel = "warn"
	}
	s, err := openSession(ctx, &quiet, file)
	if err != nil {
		return jobTarget{}, err
	}
	defer s.Close()
	job := jobName
	if job == "" {
		job = jobSpec(s.cfg).Name
	}
	rec, where, err := runtime.JobLease(ctx, s.cfg, s.host, job)
	switch {
	case errors.Is(err, runtime.ErrNoLease) && s.cfg.Control.Pinned():
		return jobTarget{job: job, addr: s.cfg.Control.Address, savepointDir: s.cfg.Checkpointing.SavepointDir}, nil
	case errors.Is(err, runtime.ErrNoLease):
		return jobTarget{}, notRunning(job, "no runner holds job %q: %v (and rest.port is not set)", job, err)
	case err != nil:
		return jobTarget{}, err
	}
	now := time.Now()
	switch {
	case rec.Released:
		return jobTarget{}, notRunning(job, "no runner holds job %q: its last runner, pid %d on %s, ended at %s (lease in %s)",
			job, rec.PID, rec.Host, rec.Renewed.Format(time.RFC3339), where)
	case !rec.Live(now):
		return jobTarget{}, notRunning(job, "no runner holds job %q: the lease of its last runner, pid %d on %s, expired at %s without a clean stop (lease in %s)",
			job, rec.PID, rec.Host, rec.Expires().Format(time.RFC3339), where)
	case rec.Control == "":
		return jobTarget{}, fmt.Errorf("job %q is held by %s, which has no control endpoint (lease in %s)", job, rec.Holder, where)
	}
	return jobTarget{job: job, addr: runtime.ControlAddress(rec), savepointDir: s.cfg.Checkpointing.SavepointDir}, nil
}

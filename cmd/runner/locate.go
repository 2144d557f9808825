package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/runner"
)

// notRunningError says that no runner holds job, and how that is known.
type notRunningError struct{ job, msg string }

func (e *notRunningError) Error() string { return e.msg }

func notRunning(job, format string, args ...any) error {
	return &notRunningError{job, fmt.Sprintf(format, args...)}
}

// jobTarget is where savepoint and stop send their request, and the client that sends it
// with the job's token.
type jobTarget struct {
	job, addr string
	client    *control.Client
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
	s, err := openOfflineSession(ctx, &quiet, file)
	if err != nil {
		return jobTarget{}, err
	}
	defer s.Close()
	job := jobName
	if job == "" {
		job = jobSpec(s.cfg).Name
	}
	rec, where, err := runner.JobLease(ctx, s.cfg, s.host, job)
	switch {
	case errors.Is(err, ownership.ErrNoLease) && s.cfg.Control.Pinned():
		return target(s.cfg, job, s.cfg.Control.Address)
	case errors.Is(err, ownership.ErrNoLease):
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
	return target(s.cfg, job, ownership.ControlAddress(rec))
}

// target returns the jobTarget of job at addr, with a client that sends the job's token,
// found as docs/operations.md says: $FLOWSTATE_REST_TOKEN, else the file rest.token-file
// names, else the file the runner on this machine wrote for its port (control.TokenFiles).
// Without any, the request goes without a token, and the endpoint serves it only if it is
// an open read. With rest.ssl.certificate or rest.ssl.trust-certificate set the client
// talks HTTPS, trusting rest.ssl.trust-certificate or else rest.ssl.certificate.
func target(cfg *config.Config, job, addr string) (jobTarget, error) {
	c := cfg.Control
	token, from, err := findToken(c, addr)
	if err != nil {
		return jobTarget{}, err
	}
	var trust *x509.CertPool
	if c.TLS() {
		file, key := c.TrustFile, config.KeyRestSSLTrust
		if file == "" {
			file, key = c.CertFile, config.KeyRestSSLCert
		}
		if trust, err = control.LoadTrust(file, key); err != nil {
			return jobTarget{}, err
		}
	}
	return jobTarget{job: job, addr: addr, client: control.NewClient(addr, token, from, trust),
		savepointDir: cfg.Checkpointing.SavepointDir}, nil
}

// findToken returns the job's token for the endpoint at addr and where it came from.
func findToken(c config.Control, addr string) (token, from string, err error) {
	if t := os.Getenv(control.TokenEnv); t != "" {
		return t, "$" + control.TokenEnv, nil
	}
	if c.TokenFile != "" {
		t, err := control.ReadTokenFile(c.TokenFile, config.KeyRestTokenFile)
		return t, config.KeyRestTokenFile + " " + c.TokenFile, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("control endpoint %q: %w", addr, err)
	}
	if !onThisMachine(host) {
		// The files hold the tokens of this machine's runners, by port: a lease that
		// names another host with the port of a local runner (anyone who can write the
		// checkpoint storage can write one) must not have that runner's token sent there.
		return "", fmt.Sprintf("none: %s is not set, nor rest.token-file, and the runner's token files on this machine are for the runners on it, not for %s", control.TokenEnv, host), nil
	}
	files, err := control.TokenFiles(port)
	if err != nil {
		return "", "", err
	}
	for _, path := range files {
		t, err := control.ReadTokenFile(path, "the runner's token file")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", "", err
		}
		return t, "the runner's token file " + path, nil
	}
	return "", fmt.Sprintf("none: %s is not set, nor rest.token-file, and this machine has none of %s, which the runner writes on its machine",
		control.TokenEnv, strings.Join(files, ", ")), nil
}

// onThisMachine reports whether host, of a control endpoint's address, is this machine: a
// loopback address, localhost, this machine's host name, or an address of one of its
// interfaces. Other names are not resolved: their answer is not this machine's to give.
func onThisMachine(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if h, err := os.Hostname(); err == nil && strings.EqualFold(host, h) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Package control is the runner's control endpoint: a small HTTP API, bound to loopback by
// default, through which `runner savepoint` and `runner stop` reach a running job. Every
// request that acts on the job carries the job's secret token and names the job it means;
// the endpoint refuses a request without the token (401, 403) or for another job (409
// Conflict): two jobs on one machine never act on each other's requests, and nobody
// without the token acts on either. Requests of a foreign Host or Origin are refused
// (guard.go); timeouts and a bound on connections keep the job's descriptors for the job.
//
// The runner starts the endpoint and hands it what it serves besides (Options.More: the
// monitor's pages, as an http.Handler): control imports the engine (runtime/dataflow) for
// the savepoint requests it hands the job, and must never import the runner
// (runtime/runner), the monitor, the plugin host or a plugin.
package control

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/net/netutil"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// JobPath answers which job the endpoint serves (GET, JSON JobInfo).
const JobPath = "/v1/job"

// SavepointPath is the endpoint that takes a savepoint (POST, JSON SavepointRequest).
const SavepointPath = "/v1/savepoint"

// CancelPath is the endpoint that cancels the job without a savepoint (POST, JSON
// CancelRequest).
const CancelPath = "/v1/cancel"

// JobInfo says which job an endpoint serves.
type JobInfo struct {
	Job string `json:"job"`
	PID int    `json:"pid"`
}

// SavepointRequest is the body of a savepoint request.
type SavepointRequest struct {
	// Job is the name of the job the request is for; the endpoint refuses any other.
	Job string `json:"job"`
	// Target is the directory to write to; "" for the default savepoint directory. The
	// runner's TargetCheck decides which it accepts.
	Target string `json:"target,omitempty"`
	// Proof names the file by which the sender proves that it can write to the local
	// directory Target as the runner's user (ProveTarget, CheckProof).
	Proof string `json:"proof,omitempty"`
	// Stop ends the job once the savepoint is complete.
	Stop bool `json:"stop,omitempty"`
	// Drain (with Stop) ends the sources' input first, as Flink's stop --drain: every
	// record read is processed and committed, and the savepoint is the job's final
	// checkpoint; the answer comes once the sinks committed it (dataflow.SavepointRequest).
	Drain bool `json:"drain,omitempty"`
}

// CancelRequest is the body of a cancel request.
type CancelRequest struct {
	// Job is the name of the job to cancel; the endpoint refuses any other.
	Job string `json:"job"`
}

// SavepointResponse answers a savepoint request.
type SavepointResponse struct {
	Pointer string `json:"pointer,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Server serves the control endpoint of one running job.
type Server struct {
	srv         *http.Server
	ln          net.Listener
	tokenFile   string
	written     bool // tokenFile was written by Listen, and Close removes it
	job         string
	savepoints  chan dataflow.SavepointRequest
	cancel      context.CancelFunc
	checkTarget TargetCheck
}

// TargetCheck returns nil for the target (and proof) of a savepoint request the job may
// write, and the reason for the refusal otherwise.
type TargetCheck func(target, proof string) error

// Options say what an endpoint serves and how it guards itself.
type Options struct {
	// Address is host:port to listen on; a port of 0 picks a free one (see Addr).
	Address string
	// Job is the name of the job served; Cancel stops it.
	Job    string
	Cancel context.CancelFunc
	// More, if not nil, serves every other path (the job's metrics, statistics and web
	// page).
	More http.Handler
	// TokenFile holds the job's token (rest.token-file); "": Listen makes a fresh token
	// and writes it to the first of TokenFiles of the bound port, and Close removes it.
	// Every request but an open read must carry the token.
	TokenFile string
	// OpenReads serves GET and HEAD requests without the token.
	OpenReads bool
	// CertFile and KeyFile, both set, serve HTTPS only (rest.ssl.certificate, rest.ssl.key).
	CertFile, KeyFile string
	// AllowedHosts are names the endpoint is reached by besides its IP addresses,
	// localhost and this machine's host name (rest.allowed-hosts).
	AllowedHosts []string
	// CheckTarget decides which savepoint targets requests may name: those it refuses
	// are answered 403 Forbidden and never reach the job. nil: any target.
	CheckTarget TargetCheck
	// Limits bound what clients may hold; zero fields take defaultLimits' (docs/operations.md).
	Limits Limits
}

// Limits bound what the endpoint's clients may hold, so that slow or many clients cannot
// take the job's file descriptors.
type Limits struct {
	// ReadTimeout bounds the reading of a request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of an answer; a savepoint's answer, which waits for
	// the savepoint, is bounded by the job instead (see Server.savepoint).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no request.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections served at once; more wait to be accepted.
	MaxConnections int
}

// defaultLimits are the limits of a runner's endpoint, as docs/operations.md states them.
var defaultLimits = Limits{ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxConnections: 32}

// maxHeaderBytes bounds a request's headers; maxBodyBytes its body.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 64 << 10
)

// Listen binds o.Address for job o.Job. Requests reach the job through Savepoints(); every
// request passes the guard first (guard.go).
func Listen(o Options) (*Server, error) {
	lim := o.Limits.orDefaults()
	var tlsConf *tls.Config
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("control endpoint: rest.ssl.certificate %s, rest.ssl.key %s: %w", o.CertFile, o.KeyFile, err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", o.Address)
	if err != nil {
		return nil, fmt.Errorf("control endpoint %s (rest.address, rest.port): %w", o.Address, err)
	}
	tok, err := newJobToken(o.TokenFile, ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{ln: ln, tokenFile: tok.file, written: tok.written, job: o.Job, savepoints: make(chan dataflow.SavepointRequest), cancel: o.Cancel, checkTarget: o.CheckTarget}
	mux := http.NewServeMux()
	if o.More != nil {
		mux.Handle("/", o.More)
	}
	mux.HandleFunc("GET "+JobPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, JobInfo{Job: s.job, PID: os.Getpid()})
	})
	mux.HandleFunc("POST "+SavepointPath, s.savepoint)
	mux.HandleFunc("POST "+CancelPath, s.cancelJob)
	s.srv = &http.Server{
		Handler:           newGuard(mux, o, tok),
		ReadHeaderTimeout: lim.ReadTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(io.Discard, "", 0), // a client's bad handshake is no news of the job's
	}
	served := netutil.LimitListener(ln, lim.MaxConnections)
	if tlsConf != nil {
		served = tls.NewListener(served, tlsConf)
	}
	go s.srv.Serve(served)
	return s, nil
}

func (l Limits) orDefaults() Limits {
	d := defaultLimits
	if l.ReadTimeout > 0 {
		d.ReadTimeout = l.ReadTimeout
	}
	if l.WriteTimeout > 0 {
		d.WriteTimeout = l.WriteTimeout
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	if l.MaxConnections > 0 {
		d.MaxConnections = l.MaxConnections
	}
	return d
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Savepoints returns the channel savepoint requests arrive on, for dataflow.Env.
func (s *Server) Savepoints() <-chan dataflow.SavepointRequest { return s.savepoints }

// TokenFile returns the file that holds the job's token: rest.token-file, or the file
// Listen wrote.
func (s *Server) TokenFile() string { return s.tokenFile }

// Close stops serving, and removes the token file Listen wrote.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if s.written {
		if rerr := os.Remove(s.tokenFile); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("control endpoint: remove the token file: %w", rerr))
		}
	}
	return err
}

// decode reads a request body into v and checks that it names this endpoint's job; it
// answers the request itself and returns false otherwise.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, job func() string) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, SavepointResponse{Error: "bad request: " + err.Error()})
		return false
	}
	switch j := job(); {
	case j == "":
		writeJSON(w, http.StatusBadRequest, SavepointResponse{Error: "bad request: it names no job"})
		return false
	case j != s.job:
		writeJSON(w, http.StatusConflict, SavepointResponse{Error: fmt.Sprintf(
			"refused: this control endpoint serves job %q, not job %q", s.job, j)})
		return false
	}
	return true
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	var req CancelRequest
	if !s.decode(w, r, &req, func() string { return req.Job }) {
		return
	}
	s.cancel()
	w.WriteHeader(http.StatusNoContent)
}

// savepoint serves a savepoint request. Its answer waits for the savepoint, which the
// job bounds (execution.checkpointing.timeout, or a drain's end), so once the body is read
// the handler lifts the connection's read and write deadlines (Limits): a long savepoint
// is never cut off by them, and a client that goes away ends the wait.
func (s *Server) savepoint(w http.ResponseWriter, r *http.Request) {
	var req SavepointRequest
	if !s.decode(w, r, &req, func() string { return req.Job }) {
		return
	}
	if s.checkTarget != nil {
		if err := s.checkTarget(req.Target, req.Proof); err != nil {
			writeJSON(w, http.StatusForbidden, SavepointResponse{Error: err.Error()})
			return
		}
	}
	rc := http.NewResponseController(w)
	if err := errors.Join(rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Time{})); err != nil {
		writeJSON(w, http.StatusInternalServerError, SavepointResponse{Error: "lift the deadlines of the connection: " + err.Error()})
		return
	}
	reply := make(chan dataflow.SavepointResult, 1)
	select {
	case s.savepoints <- dataflow.SavepointRequest{Target: req.Target, Stop: req.Stop || req.Drain, Drain: req.Drain, Reply: reply}:
	case <-r.Context().Done():
		return
	case <-time.After(30 * time.Second):
		writeJSON(w, http.StatusServiceUnavailable, SavepointResponse{Error: "the job is not accepting savepoint requests (not running?)"})
		return
	}
	select {
	case res := <-reply:
		if res.Err != nil {
			writeJSON(w, http.StatusInternalServerError, SavepointResponse{Error: res.Err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, SavepointResponse{Pointer: res.Location.ExternalPointer})
	case <-r.Context().Done():
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

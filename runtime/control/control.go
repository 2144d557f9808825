// Package control is the runner's control endpoint: a small HTTP API, bound to loopback by
// default, through which `runner savepoint` and `runner stop` reach a running job. Every
// request that acts on the job names the job it means, and the endpoint refuses a request
// for another job (409 Conflict): two jobs on one machine never act on each other's
// requests.
package control

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

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
	job         string
	savepoints  chan dataflow.SavepointRequest
	cancel      context.CancelFunc
	checkTarget TargetCheck
}

// TargetCheck returns nil for the target (and proof) of a savepoint request the job may
// write, and the reason for the refusal otherwise.
type TargetCheck func(target, proof string) error

// Listen binds addr for job. Savepoint requests reach the job through Savepoints(), but
// those whose target check refuses, which are answered 403 Forbidden; cancel stops the
// job; more, if not nil, serves every other path (the job's metrics, statistics and web
// page). A port of 0 picks a free one (see Addr).
func Listen(addr, job string, cancel context.CancelFunc, more http.Handler, check TargetCheck) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control endpoint %s (rest.address, rest.port): %w", addr, err)
	}
	s := &Server{ln: ln, job: job, savepoints: make(chan dataflow.SavepointRequest), cancel: cancel, checkTarget: check}
	mux := http.NewServeMux()
	if more != nil {
		mux.Handle("/", more)
	}
	mux.HandleFunc("GET "+JobPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, JobInfo{Job: s.job, PID: os.Getpid()})
	})
	mux.HandleFunc("POST "+SavepointPath, s.savepoint)
	mux.HandleFunc("POST "+CancelPath, s.cancelJob)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Savepoints returns the channel savepoint requests arrive on, for dataflow.Env.
func (s *Server) Savepoints() <-chan dataflow.SavepointRequest { return s.savepoints }

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// decode reads a request body into v and checks that it names this endpoint's job; it
// answers the request itself and returns false otherwise.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, job func() string) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
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

func (s *Server) savepoint(w http.ResponseWriter, r *http.Request) {
	var req SavepointRequest
	if !s.decode(w, r, &req, func() string { return req.Job }) {
		return
	}
	if err := s.checkTarget(req.Target, req.Proof); err != nil {
		writeJSON(w, http.StatusForbidden, SavepointResponse{Error: err.Error()})
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

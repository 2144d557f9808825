// Package control is the runner's control endpoint: a small HTTP API, bound to loopback by
// default, through which `runner savepoint` and `runner stop` reach a running job.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// SavepointPath is the endpoint that takes a savepoint (POST, JSON SavepointRequest).
const SavepointPath = "/v1/savepoint"

// CancelPath is the endpoint that cancels the job without a savepoint (POST).
const CancelPath = "/v1/cancel"

// SavepointRequest is the body of a savepoint request.
type SavepointRequest struct {
	// Target is the directory to write to; "" for the default savepoint directory.
	Target string `json:"target,omitempty"`
	// Stop ends the job once the savepoint is complete.
	Stop bool `json:"stop,omitempty"`
}

// SavepointResponse answers a savepoint request.
type SavepointResponse struct {
	Pointer string `json:"pointer,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Server serves the control endpoint of one running job.
type Server struct {
	srv        *http.Server
	ln         net.Listener
	savepoints chan dataflow.SavepointRequest
	cancel     context.CancelFunc
}

// Listen binds addr. Requests reach the job through Savepoints(); cancel stops the job.
func Listen(addr string, cancel context.CancelFunc) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control endpoint (rest.address, rest.port): %w", err)
	}
	s := &Server{ln: ln, savepoints: make(chan dataflow.SavepointRequest), cancel: cancel}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+SavepointPath, s.savepoint)
	mux.HandleFunc("POST "+CancelPath, func(w http.ResponseWriter, r *http.Request) {
		s.cancel()
		w.WriteHeader(http.StatusNoContent)
	})
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

func (s *Server) savepoint(w http.ResponseWriter, r *http.Request) {
	var req SavepointRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, SavepointResponse{Error: "bad request: " + err.Error()})
		return
	}
	reply := make(chan dataflow.SavepointResult, 1)
	select {
	case s.savepoints <- dataflow.SavepointRequest{Target: req.Target, Stop: req.Stop, Reply: reply}:
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

// TriggerSavepoint asks the runner at addr for a savepoint and returns its pointer.
func TriggerSavepoint(ctx context.Context, addr string, req SavepointRequest) (string, error) {
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+SavepointPath, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return "", fmt.Errorf("reach the runner's control endpoint at %s (rest.address, rest.port): is the job running? %w", addr, err)
	}
	defer resp.Body.Close()
	var out SavepointResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("control endpoint %s: %s: %w", addr, resp.Status, err)
	}
	if out.Error != "" {
		return "", errors.New(out.Error)
	}
	return out.Pointer, nil
}

// Cancel asks the runner at addr to cancel its job.
func Cancel(ctx context.Context, addr string) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+CancelPath, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("reach the runner's control endpoint at %s (rest.address, rest.port): is the job running? %w", addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("control endpoint %s: %s", addr, resp.Status)
	}
	return nil
}

package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// call posts body as JSON to path at addr and returns the response, which the caller
// closes.
func call(ctx context.Context, addr, path string, body any) (*http.Response, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the runner's control endpoint at %s: is the job running? %w", addr, err)
	}
	return resp, nil
}

// TriggerSavepoint asks the runner at addr for a savepoint of job req.Job and returns its
// pointer. The runner refuses a request for a job it does not run.
func TriggerSavepoint(ctx context.Context, addr string, req SavepointRequest) (string, error) {
	resp, err := call(ctx, addr, SavepointPath, req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out SavepointResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("control endpoint %s: %s: %w", addr, resp.Status, err)
	}
	if out.Error != "" {
		return "", fmt.Errorf("control endpoint %s: %s", addr, out.Error)
	}
	return out.Pointer, nil
}

// Cancel asks the runner at addr to cancel job. The runner refuses a request for a job it
// does not run.
func Cancel(ctx context.Context, addr, job string) error {
	resp, err := call(ctx, addr, CancelPath, CancelRequest{Job: job})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	var out SavepointResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err == nil && out.Error != "" {
		return fmt.Errorf("control endpoint %s: %s", addr, out.Error)
	}
	return fmt.Errorf("control endpoint %s: %s", addr, resp.Status)
}

// Job asks the runner at addr which job it runs.
func Job(ctx context.Context, addr string) (JobInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+JobPath, nil)
	if err != nil {
		return JobInfo{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return JobInfo{}, fmt.Errorf("reach the runner's control endpoint at %s: is the job running? %w", addr, err)
	}
	defer resp.Body.Close()
	var info JobInfo
	if resp.StatusCode != http.StatusOK {
		return JobInfo{}, fmt.Errorf("control endpoint %s: %s", addr, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Job == "" {
		return JobInfo{}, errors.Join(fmt.Errorf("control endpoint %s: no job in its answer", addr), err)
	}
	return info, nil
}

package control

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// Client reaches the control endpoint of one runner, with the job's token.
type Client struct {
	// Addr is the endpoint's host:port.
	Addr string
	// TokenFrom says where the token came from, for messages (never the token).
	TokenFrom string
	tls       bool
	http      *http.Client
}

// NewClient returns a client of the endpoint at addr (host:port) that sends token, which
// came from tokenFrom; with trust not nil it talks HTTPS and trusts those certificates.
func NewClient(addr, token, tokenFrom string, trust *x509.CertPool) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if trust != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: trust, MinVersion: tls.VersionTLS12}
	}
	return &Client{Addr: addr, TokenFrom: tokenFrom, tls: trust != nil,
		http: &http.Client{Transport: bearer{token: token, next: tr}}}
}

// LoadTrust reads the PEM certificates of file (rest.ssl.trust-certificate, or
// rest.ssl.certificate) into a pool a client trusts.
func LoadTrust(file, key string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", key, file)
	}
	return pool, nil
}

// bearer sends the token with every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// HTTP returns the HTTP client that sends the token, for the endpoint's other paths.
func (c *Client) HTTP() *http.Client { return c.http }

// URL returns the URL of path at the endpoint.
func (c *Client) URL(path string) string {
	if c.tls {
		return "https://" + c.Addr + path
	}
	return "http://" + c.Addr + path
}

// call posts body as JSON to path and returns the response, which the caller closes.
func (c *Client) call(ctx context.Context, path string, body any) (*http.Response, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(path), bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the runner's control endpoint at %s: is the job running? %w", c.Addr, err)
	}
	return resp, nil
}

// failure is the error of an answer that is not a success, with the endpoint's message.
func (c *Client) failure(resp *http.Response, msg string) error {
	if msg == "" {
		msg = resp.Status
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("control endpoint %s: %s (the token sent came from %s)", c.Addr, msg, c.TokenFrom)
	}
	return fmt.Errorf("control endpoint %s: %s", c.Addr, msg)
}

// TriggerSavepoint asks the runner for a savepoint of job req.Job and returns its pointer.
// The runner refuses a request for a job it does not run.
func (c *Client) TriggerSavepoint(ctx context.Context, req SavepointRequest) (string, error) {
	resp, err := c.call(ctx, SavepointPath, req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out SavepointResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("control endpoint %s: %s: %w", c.Addr, resp.Status, err)
	}
	if out.Error != "" || resp.StatusCode != http.StatusOK {
		return "", c.failure(resp, out.Error)
	}
	return out.Pointer, nil
}

// Cancel asks the runner to cancel job. The runner refuses a request for a job it does not
// run.
func (c *Client) Cancel(ctx context.Context, job string) error {
	resp, err := c.call(ctx, CancelPath, CancelRequest{Job: job})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	var out SavepointResponse
	json.NewDecoder(resp.Body).Decode(&out)
	return c.failure(resp, out.Error)
}

// Job asks the runner which job it runs.
func (c *Client) Job(ctx context.Context) (JobInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL(JobPath), nil)
	if err != nil {
		return JobInfo{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return JobInfo{}, fmt.Errorf("reach the runner's control endpoint at %s: is the job running? %w", c.Addr, err)
	}
	defer resp.Body.Close()
	var info JobInfo
	if resp.StatusCode != http.StatusOK {
		var out SavepointResponse
		json.NewDecoder(resp.Body).Decode(&out)
		return JobInfo{}, c.failure(resp, out.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Job == "" {
		return JobInfo{}, errors.Join(fmt.Errorf("control endpoint %s: no job in its answer", c.Addr), err)
	}
	return info, nil
}

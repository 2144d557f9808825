package control

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// do sends a request to the endpoint at addr as given, and returns its status and body.
func do(t *testing.T, method, addr, path string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// notCancelled fails the test if the job was cancelled.
func notCancelled(t *testing.T, cancelled <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-cancelled:
		t.Fatalf("%s cancelled the job", what)
	default:
	}
}

func tokenOf(t *testing.T, s *Server) string {
	t.Helper()
	b, err := os.ReadFile(s.TokenFile())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestCancelNeedsTheToken: a cancel without the token is refused (401) with a message that
// says where the CLI finds the token and never holds it; a wrong token is refused (403);
// the job keeps running through both; the job's token, as Bearer or as a Basic password,
// cancels it.
func TestCancelNeedsTheToken(t *testing.T) {
	s, _, cancelled := listen(t)
	tok := tokenOf(t, s)
	body := `{"job":"wc"}`
	jsonType := map[string]string{"Content-Type": "application/json"}
	code, msg := do(t, "POST", s.Addr(), CancelPath, jsonType, body)
	if code != http.StatusUnauthorized || !strings.Contains(msg, s.TokenFile()) || strings.Contains(msg, tok) {
		t.Fatalf("cancel without a token: %d %s; want 401 naming %s, without the token", code, msg, s.TokenFile())
	}
	wrong := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + strings.Repeat("0", len(tok))}
	if code, msg = do(t, "POST", s.Addr(), CancelPath, wrong, body); code != http.StatusForbidden || strings.Contains(msg, tok) {
		t.Fatalf("cancel with a wrong token: %d %s; want 403 without the token", code, msg)
	}
	notCancelled(t, cancelled, "a request without the job's token")
	if _, err := NewClient(s.Addr(), "not-the-token-at-all", "a test", nil).TriggerSavepoint(context.Background(), SavepointRequest{Job: "wc"}); err == nil ||
		!strings.Contains(err.Error(), "the token sent came from a test") {
		t.Fatalf("savepoint with a wrong token = %v; want a refusal saying where the token came from", err)
	}
	req, _ := http.NewRequest("POST", "http://"+s.Addr()+CancelPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("anyone", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("cancel with the token as Basic password: %s; want 204", resp.Status)
	}
	<-cancelled
}

// TestForeignOriginIsRefused: a request from a page of another origin (another port of
// this machine, or an opaque "null" origin) is refused even with the token; the
// endpoint's own origin is served.
func TestForeignOriginIsRefused(t *testing.T) {
	s, _, cancelled := listen(t)
	tok := tokenOf(t, s)
	for _, origin := range []string{"http://127.0.0.1:1", "null", "https://" + s.Addr(), "http://evil.example"} {
		h := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + tok, "Origin": origin}
		if code, msg := do(t, "POST", s.Addr(), CancelPath, h, `{"job":"wc"}`); code != http.StatusForbidden || !strings.Contains(msg, "origin") {
			t.Fatalf("cancel from origin %s: %d %s; want 403", origin, code, msg)
		}
		if code, _ := do(t, "GET", s.Addr(), JobPath, map[string]string{"Origin": origin}, ""); code != http.StatusForbidden {
			t.Fatalf("GET from origin %s: %d; want 403", origin, code)
		}
	}
	notCancelled(t, cancelled, "a request from a foreign origin")
	if code, _ := do(t, "GET", s.Addr(), JobPath, map[string]string{"Origin": "http://" + s.Addr()}, ""); code != http.StatusOK {
		t.Fatalf("GET from the endpoint's own origin: %d; want 200", code)
	}
}

// TestForeignHostIsRefused: a request whose Host is a name other than the endpoint's (as
// a DNS rebinding page sends) is refused, for reads and for POSTs with the token; IP
// literals, localhost and rest.allowed-hosts names are served.
func TestForeignHostIsRefused(t *testing.T) {
	s, _, cancelled := listenWith(t, Options{OpenReads: true, AllowedHosts: []string{"flow.example"}})
	tok := tokenOf(t, s)
	_, port, _ := strings.Cut(s.Addr(), ":")
	for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port} {
		if code, msg := do(t, "GET", s.Addr(), "/jobs/overview", map[string]string{"Host": host}, ""); code != http.StatusForbidden || !strings.Contains(msg, "Host") {
			t.Fatalf("GET with Host %s: %d %s; want 403", host, code, msg)
		}
		h := map[string]string{"Host": host, "Content-Type": "application/json", "Authorization": "Bearer " + tok}
		if code, _ := do(t, "POST", s.Addr(), CancelPath, h, `{"job":"wc"}`); code != http.StatusForbidden {
			t.Fatalf("cancel with Host %s: %d; want 403", host, code)
		}
	}
	notCancelled(t, cancelled, "a request for a foreign Host")
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "FLOW.example:" + port} {
		if code, _ := do(t, "GET", s.Addr(), JobPath, map[string]string{"Host": host}, ""); code != http.StatusOK {
			t.Fatalf("GET with Host %s: %d; want 200", host, code)
		}
	}
}

// TestTextPlainPostIsRefused: a POST whose body is not declared JSON (what an HTML form or
// a simple cross-origin request sends) is refused, even with the token.
func TestTextPlainPostIsRefused(t *testing.T) {
	s, _, cancelled := listen(t)
	tok := tokenOf(t, s)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		h := map[string]string{"Content-Type": ct, "Authorization": "Bearer " + tok}
		if code, _ := do(t, "POST", s.Addr(), CancelPath, h, `{"job":"wc"}`); code != http.StatusUnsupportedMediaType {
			t.Fatalf("cancel as %q: %d; want 415", ct, code)
		}
	}
	notCancelled(t, cancelled, "a POST that is not JSON")
}

// TestClosedReadsNeedTheToken: with reads closed, a GET without the token is refused with
// a Basic challenge (a browser asks for a password) and one with it served, as Bearer or as
// a Basic password; with reads open, a GET is served without it.
func TestClosedReadsNeedTheToken(t *testing.T) {
	s, c, _ := listenWith(t, Options{})
	resp, err := http.Get("http://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Fatalf("GET with closed reads, no token: %s %v; want 401 with a Basic challenge", resp.Status, resp.Header)
	}
	if _, err := c.Job(context.Background()); err != nil {
		t.Fatalf("GET with closed reads and the token: %v", err)
	}
	req, _ := http.NewRequest("GET", "http://"+s.Addr()+JobPath, nil)
	req.SetBasicAuth("me", tokenOf(t, s))
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with the token as Basic password: %v %v", resp, err)
	}
	resp.Body.Close()
	s, _, _ = listen(t)
	if code, _ := do(t, "GET", s.Addr(), JobPath, nil, ""); code != http.StatusOK {
		t.Fatalf("GET with open reads, no token: %d; want 200", code)
	}
}

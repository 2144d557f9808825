package e2e

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testcert"
	"github.com/flowstate/flowstate/runtime/control"
)

// post sends body as a POST of content type ctype to url with header extra, and returns
// the answer's status and body.
func post(t *testing.T, url, ctype, body string, extra map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	for k, v := range extra {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// retried runs a runner subcommand until it succeeds (the job's lease may not name its
// endpoint yet), for up to a minute, and returns its output.
func retried(t *testing.T, r *runner, args ...string) string {
	t.Helper()
	var out string
	waitFor(t, r, "runner "+strings.Join(args, " ")+" to succeed", time.Minute, func(string) error {
		var err error
		out, err = runnerCmd(t, args...)
		return err
	})
	return out
}

// tokenClient returns a client of the control endpoint at addr that sends the token its
// runner wrote to $XDG_RUNTIME_DIR/flowstate/rest-PORT.token (the e2e TestMain gives every
// runner of the tests that directory).
func tokenClient(t *testing.T, addr string) *control.Client {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "flowstate", "rest-"+port+".token")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the runner's token file: %v", err)
	}
	return control.NewClient(addr, strings.TrimSpace(string(b)), file, nil)
}

// TestControlEndpointNeedsTheToken: a cancel without the job's token, with a wrong one, as
// text/plain, or for a foreign Host is refused and the job keeps running; the refusal
// names the token file the runner wrote (0600, where the test computes it) and never holds
// the token; runner savepoint, status and stop, given no token, find it and work.
func TestControlEndpointNeedsTheToken(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 3000, map[string]any{
		"execution.checkpointing.savepoint-dir": filepath.Join(t.TempDir(), "savepoints"),
	})
	r := s.run(t)
	addr := controlAddress(t, r)
	_, port, _ := net.SplitHostPort(addr)
	tokenFile := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "flowstate", "rest-"+port+".token")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, %v; want mode 0600", tokenFile, fi, err)
	}
	b, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(b))
	cancel := "http://" + addr + "/v1/cancel"
	code, msg := post(t, cancel, "application/json", `{"job":"wc"}`, nil)
	if code != http.StatusUnauthorized || !strings.Contains(msg, tokenFile) || strings.Contains(msg, token) {
		t.Fatalf("cancel without the token: %d %s; want 401 naming %s", code, msg, tokenFile)
	}
	if code, _ = post(t, cancel, "application/json", `{"job":"wc"}`, map[string]string{"Authorization": "Bearer wrong-token-of-some-length"}); code != http.StatusForbidden {
		t.Fatalf("cancel with a wrong token: %d; want 403", code)
	}
	if code, _ = post(t, cancel, "text/plain", `{"job":"wc"}`, map[string]string{"Authorization": "Bearer " + token}); code != http.StatusUnsupportedMediaType {
		t.Fatalf("cancel as text/plain: %d; want 415", code)
	}
	if code, _ = post(t, cancel, "application/json", `{"job":"wc"}`, map[string]string{"Authorization": "Bearer " + token, "Host": "rebound.example:" + port}); code != http.StatusForbidden {
		t.Fatalf("cancel for a foreign Host: %d; want 403", code)
	}
	if r.exited() {
		t.Fatalf("a refused request ended the job:\n%s", tail(r.out.String(), 20))
	}
	if strings.Contains(r.out.String(), token) {
		t.Fatal("the runner's log holds the token")
	}
	ptr := lastLine(retried(t, r, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)))
	checkSelfContained(t, ptr)
	if out := retried(t, r, "status", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "job wc: RUNNING") {
		t.Fatalf("status: %s; want job wc: RUNNING", out)
	}
	if out := retried(t, r, "stop", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "job cancelled") {
		t.Fatalf("stop: %s", out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Fatalf("the token file outlived the runner: %v", err)
	}
}

// TestNetworkEndpointNeedsTLS: a runner asked to serve its endpoint on all interfaces in
// plain HTTP refuses to start, within seconds and before it says anything of the job,
// naming the keys that would let it; config
// explain says the endpoint is refused, and, with the risk accepted, that it is accepted.
func TestNetworkEndpointNeedsTLS(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 1<<16, 3000, map[string]any{"rest.address": "0.0.0.0"})
	r := s.run(t)
	if err := r.wait(t, 30*time.Second); err == nil {
		t.Fatalf("a plain HTTP endpoint on 0.0.0.0 ran:\n%s", tail(r.out.String(), 20))
	}
	for _, want := range []string{"rest.address", "rest.ssl.certificate", "rest.ssl.key", "rest.accept-plaintext-risk"} {
		if !strings.Contains(r.out.String(), want) {
			t.Fatalf("the refusal does not name %s:\n%s", want, tail(r.out.String(), 10))
		}
	}
	if strings.Contains(r.out.String(), "control endpoint listening") || strings.Contains(r.out.String(), "working state:") {
		t.Fatalf("the refused runner listened or described the job before refusing:\n%s", tail(r.out.String(), 10))
	}
	explain := func(cfg string) string {
		out, err := runnerCmd(t, "config", "explain", "--config", cfg, "--plugin-dir", testbin.PluginDir(t))
		if err != nil {
			t.Fatalf("config explain: %v", err)
		}
		return out
	}
	if out := explain(s.config); !strings.Contains(out, "Control endpoint (refused)") {
		t.Fatalf("config explain does not say the endpoint is refused:\n%s", out)
	}
	s.add(t, map[string]any{"rest.accept-plaintext-risk": true})
	if out := explain(s.config); !strings.Contains(out, "Control endpoint (plaintext-risk-accepted)") {
		t.Fatalf("config explain does not say the risk is accepted:\n%s", out)
	}
}

// TestCLIOverTLS: with a certificate configured the endpoint serves HTTPS only, and
// runner savepoint, status and stop reach it, trusting that certificate.
func TestCLIOverTLS(t *testing.T) {
	cert, key := testcert.Write(t)
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 3000, map[string]any{
		"execution.checkpointing.savepoint-dir": filepath.Join(t.TempDir(), "savepoints"),
		"rest.ssl.certificate":                  cert,
		"rest.ssl.key":                          key,
	})
	r := s.run(t)
	addr := controlAddress(t, r)
	waitOutput(t, r, "control endpoint and web page: https://"+addr+"/", 30*time.Second)
	if resp, err := http.Get("http://" + addr + "/v1/job"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the TLS endpoint answered plain HTTP")
		}
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp, err := insecure.Get("https://" + addr + "/v1/job"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/job over TLS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	ptr := lastLine(retried(t, r, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)))
	checkSelfContained(t, ptr)
	if out := retried(t, r, "status", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "https://"+addr+"/") {
		t.Fatalf("status does not give the https address:\n%s", out)
	}
	if out := retried(t, r, "stop", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "job cancelled") {
		t.Fatalf("stop: %s", out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
}

// openFilesOf counts the file descriptors of process pid.
func openFilesOf(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Skipf("no /proc/%d/fd: %v", pid, err)
	}
	return len(fds)
}

// sampleOpenFiles counts pid's file descriptors every period while wait runs, and returns
// the most it counted.
func sampleOpenFiles(t *testing.T, pid int, every time.Duration, wait func()) int {
	t.Helper()
	stop, peak := make(chan struct{}), make(chan int, 1)
	go func() {
		most := 0
		tick := time.NewTicker(every) // the measurement's sampling period
		defer tick.Stop()
		for {
			if fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd"); err == nil {
				most = max(most, len(fds))
			}
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	func() {
		defer close(stop) // also when wait fails the test
		wait()
	}()
	return <-peak
}

// TestHeldConnectionsLeaveTheRunnerItsDescriptors: 200 connections to the control
// endpoint that send nothing take at most the endpoint's bound (32) of the runner's
// descriptors while the job goes on checkpointing; once they are gone, stop works.
func TestHeldConnectionsLeaveTheRunnerItsDescriptors(t *testing.T) {
	const held, bound, slack = 200, 32, 24
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 3000, nil)
	r := s.run(t)
	addr := controlAddress(t, r)
	waitOutput(t, r, "checkpoint complete", time.Minute)
	pid := r.cmd.Process.Pid
	base := openFilesOf(t, pid)
	var conns []net.Conn
	for range held {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	before := r.count(completedLine)
	peak := sampleOpenFiles(t, pid, 10*time.Millisecond, func() {
		waitMatches(t, r, completedLine, before+5, time.Minute) // 5 checkpoints with the connections held
	})
	t.Logf("runner descriptors: %d before, %d at the peak with %d connections held", base, peak, held)
	if peak > base+bound+slack {
		t.Fatalf("the runner held %d descriptors with %d connections held, %d before; want at most %d more", peak, held, base, bound+slack)
	}
	for _, c := range conns {
		c.Close()
	}
	if out := retried(t, r, "stop", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)); !strings.Contains(out, "job cancelled") {
		t.Fatalf("stop: %s", out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v", err)
	}
}

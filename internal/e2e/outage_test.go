package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// s3Proxy forwards TCP connections to an S3 server, until it is cut: then it closes the
// connections it forwards and every new one at once, as an unreachable server does.
type s3Proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	down    bool
	conns   map[net.Conn]bool
	refused atomic.Int64
}

// startS3Proxy forwards a port of 127.0.0.1 to target (host:port) until t ends.
func startS3Proxy(t *testing.T, target string) *s3Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &s3Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		p.cut()
	})
	return p
}

// endpoint is the proxy's address as an S3 endpoint.
func (p *s3Proxy) endpoint() string { return "http://" + p.ln.Addr().String() }

// forward copies c to and from the target, unless the proxy is cut.
func (p *s3Proxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		p.refused.Add(1)
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	go pipe(s, c)
	go pipe(c, s)
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// cut makes the server unreachable: the open connections close, new ones close at once.
func (p *s3Proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// restore makes the server reachable again.
func (p *s3Proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestDisaggregatedSurvivesAnS3Outage runs the word count on the disaggregated backend with
// its tables in S3 and a memtable and cache small enough that it writes and reads tables
// all the time, and makes S3 unreachable in the middle of the run (its connections cut,
// new ones refused) while the checkpoints stay on the local disk. The S3 client retries
// with backoff, then the attempt fails and the restart strategy takes over: attempts fail
// while S3 is down (a restore must find every table). Once S3 answers again the job
// recovers in the same backend plugin process (not restarted: nothing in it broke for
// good) and its committed output is exact.
func TestDisaggregatedSurvivesAnS3Outage(t *testing.T) {
	endpoint := os.Getenv(envS3)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("FLOWSTATE_S3_ENDPOINT is not set: make test starts the S3 server (scripts/with-s3.sh)")
		}
		t.Skip("no S3 server: run through make test or scripts/with-s3.sh")
	}
	bucket, _ := s3Bucket(t)
	proxy := startS3Proxy(t, strings.TrimPrefix(endpoint, "http://"))
	s := newWordcount(t, "disaggregated", "filesystem", 1<<20, 20000, nil)
	s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": 1000, "restart-strategy.fixed-delay.delay": "200ms"})
	s.add(t, map[string]any{
		"state.backend.disaggregated.remote":            "s3://" + bucket + "/tables",
		"state.backend.disaggregated.localdir":          filepath.Join(s.dir, "disaggregated"),
		"state.backend.disaggregated.write-buffer-size": "64kb",
		"state.backend.disaggregated.cache-size":        "128kb",
		"state.backend.disaggregated.s3.endpoint":       proxy.endpoint(),
		"state.backend.disaggregated.s3.access-key":     "testkey",
		"state.backend.disaggregated.s3.secret-key":     "testsecret12345",
		"state.backend.disaggregated.s3.region":         "us-east-1",
		"state.backend.disaggregated.s3.path-style":     true,
	})
	r := s.run(t)
	waitFor(t, r, "a completed checkpoint", time.Minute, func(out string) error {
		if !strings.Contains(out, "checkpoint complete") {
			return errors.New("no completed checkpoint")
		}
		return nil
	})
	pid := pluginOf(r.cmd.Process.Pid, "disaggregated")
	if pid <= 0 {
		t.Fatalf("no disaggregated plugin process:\n%s", tail(r.out.String(), 20))
	}
	from := len(r.out.String())
	cut := time.Now()
	proxy.cut()
	const failures = 2 // the attempt running at the cut, and at least one restarted while S3 is down
	waitFor(t, r, fmt.Sprintf("%d failed attempts while S3 is unreachable", failures), 3*time.Minute, func(out string) error {
		if n := strings.Count(out[from:], "job failed; recovering"); n < failures {
			return fmt.Errorf("%d failed attempts since the cut", n)
		}
		return nil
	})
	if proxy.refused.Load() == 0 {
		t.Fatalf("no connection to S3 was refused while it was cut:\n%s", tail(r.out.String(), 20))
	}
	t.Logf("%d attempts failed in the %s S3 was down:\n%s", failures, time.Since(cut).Round(time.Second), grepLines(r.out.String()[from:], "job failed; recovering"))
	from = len(r.out.String())
	proxy.restore()
	back := time.Now()
	waitFor(t, r, "a checkpoint completed once S3 is back", 3*time.Minute, func(out string) error {
		if !strings.Contains(out[from:], "checkpoint complete") {
			return errors.New("no completed checkpoint since S3 came back")
		}
		return nil
	})
	t.Logf("a checkpoint completed %s after S3 came back", time.Since(back).Round(time.Second))
	if now := pluginOf(r.cmd.Process.Pid, "disaggregated"); now != pid {
		t.Fatalf("the disaggregated plugin is process %d after the outage, %d before: it was restarted\n%s", now, pid, tail(r.out.String(), 30))
	}
	if err := r.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
	}
	s.check(t, r.out.String())
}

// grepLines returns the lines of out that contain s.
func grepLines(out, s string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

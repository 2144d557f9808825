package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// TestStatusOfRunningJob: `runner status` reads the job's answers and says what a person
// needs: state, uptime, address, throughput, plugins, restarts, the last checkpoints.
func TestStatusOfRunningJob(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	m := startJob(clock)
	for _, e := range testCheckpoints {
		feed(m, start, e)
	}
	m.Subtask("count", 0).RecordsIn(6000)
	src := m.Subtask("source", 1)
	for i := range StatusSplits + 2 {
		src.SplitPending(fmt.Sprintf("in.%02d", i), int64(i*10))
	}
	src.EmitEventTimeLag(250 * time.Millisecond)
	m.Subtask(dataflow.SinkID, 0).Committed(900, 1, 40*time.Millisecond)
	m.Restarted()
	m.SetState(JobRunning)
	clock.Advance(4 * time.Minute)
	srv := serve(t, m)
	addr := srv.URL

	st, err := GetStatus(context.Background(), nil, addr, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Details == nil || st.Checkpoints == nil {
		t.Fatalf("status %+v: want running with details and checkpoints", st)
	}
	var out bytes.Buffer
	if err := WriteStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	var completed, failed int
	for _, e := range testCheckpoints {
		if e.took > 0 && e.fail == "" {
			completed++
		} else if e.fail != "" {
			failed++
		}
	}
	wants := []string{
		"job orders: RUNNING, up 4m0s",
		srv.URL + "/",
		"restarts:",
		"hashmap:", "pid 4242", "version 1.2.0",
		fmt.Sprintf("checkpoints: %d completed, %d failed, 1 in progress", completed, failed),
		"KeyBy count",
		"expired after 2m0s",
		// The source subtask's pending records (the sum of its splits) and emit lag; the
		// sink's commits; the splits with the most pending first, at most StatusSplits.
		"(2 more splits",
	}
	for _, row := range [][]string{
		{"Source:", "orders", "1", fmt.Sprint(10 * (StatusSplits + 1) * (StatusSplits + 2) / 2), "250ms", "-", "-", "-", "-", "-"},
		{"sink", "0", "-", "-", "1", "900", "1", "40ms", "40ms"},
		{fmt.Sprintf("in.%02d", StatusSplits+1), "Source:", "orders", "1", fmt.Sprint(10 * (StatusSplits + 1))},
	} {
		if !hasRow(text, row...) {
			t.Errorf("status lacks the row %q:\n%s", row, text)
		}
	}
	// The newest StatusCheckpoints checkpoints are listed, each on its row, newest first.
	for i := range StatusCheckpoints {
		e := testCheckpoints[len(testCheckpoints)-1-i]
		wants = append(wants, fmt.Sprintf("\n%d ", e.id))
	}
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("status lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "\nin.01 ") || !strings.Contains(text, "\nin.02 ") {
		t.Errorf("status lists other splits than the %d with the most pending records:\n%s", StatusSplits, text)
	}
	if strings.Contains(text, fmt.Sprintf("\n%d ", testCheckpoints[0].id)) && len(testCheckpoints) > StatusCheckpoints {
		t.Errorf("status lists checkpoint %d, older than the newest %d:\n%s", testCheckpoints[0].id, StatusCheckpoints, text)
	}

	// --json carries the REST answers under details and checkpoints.
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if jpath(t, v, "running") != true || num(t, v, "details", "numRestarts") != 1 ||
		num(t, v, "checkpoints", "counts", "completed") != float64(completed) {
		t.Errorf("status JSON %s", b)
	}
}

// TestStatusOfStoppedJob: nothing listens at the address, so the job is not running; an
// endpoint serving another job is an error naming both.
func TestStatusOfStoppedJob(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	st, err := GetStatus(context.Background(), nil, "http://"+addr, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if st.Running || st.Details != nil {
		t.Fatalf("status %+v: want not running", st)
	}
	var out bytes.Buffer
	WriteStatus(&out, st)
	if want := "job orders: not running (nothing answers at " + addr + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("status %q, want %q", out.String(), want)
	}

	m := New("payments", Options{})
	srv := serve(t, m)
	_, err = GetStatus(context.Background(), nil, srv.URL, "orders")
	if err == nil || !strings.Contains(err.Error(), `job "orders" not found`) || !strings.Contains(err.Error(), `"payments"`) {
		t.Errorf("status of another runner's job: %v, want an error naming both jobs", err)
	}

	m.SetState(JobFinished)
	st, err = GetStatus(context.Background(), nil, srv.URL, "payments")
	if err != nil || st.Running {
		t.Errorf("status of a finished job: %+v, %v; want not running", st, err)
	}
}

// TestStatusOfOtherProgram: something answers at the address, but not with job statistics.
func TestStatusOfOtherProgram(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := GetStatus(context.Background(), nil, srv.URL, "orders")
	if err == nil || !strings.Contains(err.Error(), "serves no job statistics") {
		t.Errorf("status from a program without job statistics: %v", err)
	}
}

// hasRow reports whether a line of text has exactly fields.
func hasRow(text string, fields ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		if slices.Equal(strings.Fields(line), fields) {
			return true
		}
	}
	return false
}

package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fakeWeed is a stand-in for SeaweedFS's weed mini: it answers 200 to every request on its
// -s3.port, which is all scripts/s3server.sh asks of the server it starts.
const fakeWeed = `package main

import (
	"net/http"
	"os"
	"strings"
)

func main() {
	port := ""
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "-s3.port="); ok {
			port = v
		}
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	if err := http.ListenAndServe("127.0.0.1:"+port, ok); err != nil {
		os.Exit(1)
	}
}
`

// TestWithS3PicksAFreePort runs scripts/with-s3.sh with a stand-in for the S3 server:
// without FLOWSTATE_S3_PORT it starts the server on a free port (not a fixed one a user's
// own server may hold) and exports that port and the endpoint to the command, which
// reaches the server there; a FLOWSTATE_S3_PORT that is taken fails, naming the variable.
func TestWithS3PicksAFreePort(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("scripts/s3server.sh needs curl on PATH")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(fakeWeed), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "weed", "main.go")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in for weed: %v\n%s", err, out)
	}
	env := []string{"FLOWSTATE_WEED_DIR=" + dir, "TMPDIR=" + dir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLOWSTATE_S3_") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	withS3 := func(extraEnv []string, script string) (string, error) {
		cmd := exec.Command("../../scripts/with-s3.sh", "bash", "-c", script)
		cmd.Env = append(env, extraEnv...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := withS3(nil, `echo "port=$FLOWSTATE_S3_PORT endpoint=$FLOWSTATE_S3_ENDPOINT status=$(curl -s -o /dev/null -w '%{http_code}' "$FLOWSTATE_S3_ENDPOINT/")"`)
	if err != nil {
		t.Fatalf("with-s3.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`port=(\d+) endpoint=(\S+) status=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the command did not get FLOWSTATE_S3_PORT and FLOWSTATE_S3_ENDPOINT:\n%s", out)
	}
	port, _ := strconv.Atoi(m[1])
	if port < 20000 || port >= 50000 || m[2] != "http://127.0.0.1:"+m[1] || m[3] != "200" {
		t.Fatalf("port %s, endpoint %s, server answered %s: want a free port from 20000 to 49999 and the server there:\n%s", m[1], m[2], m[3], out)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	out, err = withS3([]string{"FLOWSTATE_S3_PORT=" + takenPort}, "true")
	if err == nil || !strings.Contains(out, "port 127.0.0.1:"+takenPort+" (FLOWSTATE_S3_PORT) is already in use") {
		t.Fatalf("with-s3.sh on a taken FLOWSTATE_S3_PORT: %v\n%s", err, out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/control"
)

// writeToken writes token to path as a runner does (0600 in a 0700 directory).
func writeToken(t *testing.T, path, token string) {
	t.Helper()
	if err := control.WriteTokenFile(path, token); err != nil {
		t.Fatal(err)
	}
}

// TestTokenLookupOrder: the CLI takes the job's token from $FLOWSTATE_REST_TOKEN, else
// rest.token-file, else the runner's file for the port in $XDG_RUNTIME_DIR/flowstate, else
// in the user's cache directory (where a runner without XDG_RUNTIME_DIR writes it), for an
// endpoint on this machine only; with none it sends none and says where it looked.
func TestTokenLookupOrder(t *testing.T) {
	runtimeDir, cacheDir := t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("XDG_CACHE_HOME", cacheDir)
	t.Setenv(control.TokenEnv, "")
	const addr = "127.0.0.1:4711"
	inRuntime := filepath.Join(runtimeDir, "flowstate", "rest-4711.token")
	inCache := filepath.Join(cacheDir, "flowstate", "run", "rest-4711.token")
	tok, from, err := findToken(config.Control{}, addr)
	if err != nil || tok != "" || !strings.Contains(from, inRuntime) || !strings.Contains(from, inCache) {
		t.Fatalf("no token anywhere: %q from %q, %v; want none, naming both files", tok, from, err)
	}
	want := func(what, wantTok, wantFrom string, c config.Control) {
		t.Helper()
		tok, from, err := findToken(c, addr)
		if err != nil || tok != wantTok || !strings.Contains(from, wantFrom) {
			t.Fatalf("%s: %q from %q, %v; want %q from %s", what, tok, from, err, wantTok, wantFrom)
		}
	}
	writeToken(t, inCache, strings.Repeat("c", 20))
	want("a runner without XDG_RUNTIME_DIR", strings.Repeat("c", 20), inCache, config.Control{})
	writeToken(t, inRuntime, strings.Repeat("r", 20))
	want("the runner's runtime directory", strings.Repeat("r", 20), inRuntime, config.Control{})
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(strings.Repeat("f", 20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A lease may name any host with the port of a runner here: the runner's own file
	// goes to this machine's addresses only.
	host, _ := os.Hostname()
	for _, local := range []string{"[::1]:4711", "localhost:4711", host + ":4711"} {
		if tok, _, err := findToken(config.Control{}, local); err != nil || tok != strings.Repeat("r", 20) {
			t.Errorf("%s: %q, %v; want the runner's token", local, tok, err)
		}
	}
	for _, remote := range []string{"203.0.113.9:4711", "evil.example:4711"} {
		tok, from, err := findToken(config.Control{}, remote)
		if err != nil || tok != "" || !strings.Contains(from, "not for "+strings.TrimSuffix(remote, ":4711")) {
			t.Errorf("%s: %q from %q, %v; want no token, saying the files are this machine's", remote, tok, from, err)
		}
	}
	want("rest.token-file", strings.Repeat("f", 20), "rest.token-file", config.Control{TokenFile: file})
	t.Setenv(control.TokenEnv, strings.Repeat("e", 20))
	want("the environment", strings.Repeat("e", 20), "$"+control.TokenEnv, config.Control{TokenFile: file})
}

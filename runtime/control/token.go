package control

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TokenEnv is the environment variable the CLI takes the job's token from, before any file.
const TokenEnv = "FLOWSTATE_REST_TOKEN"

// minTokenLen is the shortest token a token file may hold.
const minTokenLen = 16

// NewToken returns a fresh random token: 32 bytes from crypto/rand, in hex.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// jobToken is the token an endpoint serves with, and where the CLI finds it.
type jobToken struct {
	value, file string
	written     bool   // the endpoint wrote file, and removes it when it closes
	help        string // where the CLI finds the token, for refusals (no secret)
}

// newJobToken returns the token in file (rest.token-file), or, with file "", a fresh one
// written to the first of TokenFiles of addr's port.
func newJobToken(file, addr string) (jobToken, error) {
	if file != "" {
		v, err := ReadTokenFile(file, "control endpoint: rest.token-file")
		return jobToken{value: v, file: file,
			help: fmt.Sprintf("runner savepoint, stop and status read it from rest.token-file %s (or %s)", file, TokenEnv)}, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return jobToken{}, fmt.Errorf("control endpoint %s: %w", addr, err)
	}
	files, err := TokenFiles(port)
	if err != nil {
		return jobToken{}, err
	}
	t := jobToken{value: NewToken(), file: files[0], written: true,
		help: fmt.Sprintf("the runner wrote it to %s, where runner savepoint, stop and status on this machine read it (elsewhere: %s or rest.token-file)", files[0], TokenEnv)}
	return t, WriteTokenFile(t.file, t.value)
}

// TokenFiles are the files a runner whose endpoint listens on port may have written its
// generated token to, the one it writes first: rest-PORT.token in $XDG_RUNTIME_DIR/flowstate
// when XDG_RUNTIME_DIR is set, and in flowstate/run of the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux). The CLI reads the first that
// exists, so a runner started without XDG_RUNTIME_DIR (a system service) is found from a
// login shell that has it.
func TokenFiles(port string) ([]string, error) {
	name := "rest-" + port + ".token"
	var files []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		files = append(files, filepath.Join(d, "flowstate", name))
	}
	if d, err := os.UserCacheDir(); err == nil {
		files = append(files, filepath.Join(d, "flowstate", "run", name))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no directory for the control endpoint's token: neither XDG_RUNTIME_DIR nor a user cache directory ($XDG_CACHE_HOME, $HOME) is set")
	}
	return files, nil
}

// WriteTokenFile writes token to path, readable by this user only (0600), in a directory
// only this user may enter (0700, created if missing; an existing one must be this user's
// and closed to others).
func WriteTokenFile(path, token string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("control endpoint token: %w", err)
	}
	if err := checkPrivate(dir, true); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return fmt.Errorf("control endpoint token: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("control endpoint token: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("control endpoint token: write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("control endpoint token: %w", err)
	}
	return nil
}

// ReadTokenFile reads the token in path, which others than its owner must not be able to
// read (as ssh refuses an open key file); what names the file for messages (a key, or the
// runner's default file).
func ReadTokenFile(path, what string) (string, error) {
	if err := checkPrivate(path, false); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLen || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: %s must hold one token of at least %d characters and no spaces (for example the output of openssl rand -hex 32)", what, path, minTokenLen)
	}
	return tok, nil
}

// checkPrivate refuses a file or directory others than this user may read or change.
func checkPrivate(path string, dir bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if dir != fi.IsDir() {
		return fmt.Errorf("%s: %w", path, fs.ErrInvalid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %04o): chmod go-rwx %s", path, perm, path)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d)", path, uid, os.Getuid())
	}
	return nil
}

// owner returns the user id that owns fi.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

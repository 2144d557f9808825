package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// binary is a plugin binary opened for execution. The checks (a regular, executable file
// with the pinned SHA-256) read the open file, and the process is started from that same
// open file where the system allows it (see command), so that no one can swap the file
// between the check and the exec.
type binary struct {
	path string // as given, absolute
	f    *os.File
}

// openBinary opens the plugin binary at path and checks it: a regular, executable file
// whose SHA-256 is pin (hex, any case) when pin is not empty. Every error names the file.
func openBinary(path, pin string) (*binary, error) {
	var want []byte
	if pin != "" {
		sum, err := hex.DecodeString(pin)
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("plugin %s: checksum pin %q is not a hex SHA-256", path, pin)
		}
		want = sum
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", path, err)
	}
	b := &binary{path: path, f: f}
	if err := b.check(pin, want); err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

func (b *binary) check(pin string, want []byte) error {
	fi, err := b.f.Stat()
	if err != nil {
		return fmt.Errorf("plugin %s: %w", b.path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("plugin %s is not a regular file (mode %s): %w", b.path, fi.Mode(), ErrNotExecutable)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("plugin %s is not executable (mode %s): %w", b.path, fi.Mode(), ErrNotExecutable)
	}
	if want == nil {
		return nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, b.f); err != nil {
		return fmt.Errorf("plugin %s: reading it for its checksum: %w", b.path, err)
	}
	if got := h.Sum(nil); string(got) != string(want) {
		return fmt.Errorf("plugin %s: %w: expected sha256 %s, actual %s", b.path, ErrChecksumMismatch, strings.ToLower(pin), hex.EncodeToString(got))
	}
	return nil
}

// command returns the command that runs the binary: from the open file where the system
// allows it (execPath), else by its path. Its first argument is the binary's path.
func (b *binary) command() *exec.Cmd {
	cmd := exec.Command(b.path)
	if p, ok := execPath(); ok {
		cmd.Path = p
		cmd.ExtraFiles = []*os.File{b.f}
	}
	cmd.Args = []string{b.path}
	return cmd
}

// close releases the open file once the process has started (or failed to).
func (b *binary) close() { b.f.Close() }

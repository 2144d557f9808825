package ownership

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// readSelf reads this process's identity from /proc. The pid namespace and the start time
// are left empty unless /proc is this process's own view (its /proc/self is this pid): a
// /proc of another pid namespace would name other processes.
func readSelf() identity {
	me := identity{pid: os.Getpid()}
	me.host, _ = os.Hostname()
	me.boot = readTrimmed("/proc/sys/kernel/random/boot_id")
	if id := readTrimmed("/etc/machine-id"); id != "" {
		me.machine = appSpecific(id)
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					me.booted = time.Unix(s, 0)
				}
			}
		}
	}
	if me.booted.IsZero() {
		me.boot = "" // a reboot could not be told from another machine
	}
	pid, start, _, err := readStat("/proc/self/stat")
	if err != nil || pid != me.pid {
		return me
	}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		me.pidNS, me.start = ns, start
	}
	return me
}

// appSpecific derives this program's own id of the machine from its machine id, which
// is not to be shown to others (machine-id(5)): an HMAC-SHA256 keyed by the machine id,
// as systemd's sd_id128_get_machine_app_specific does, cut to 128 bits.
func appSpecific(machineID string) string {
	m := hmac.New(sha256.New, []byte(machineID))
	m.Write([]byte("flowstate lease holder"))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// probe tells whether process pid exists, has exited, and when it started. Existence is
// asked of the kernel (kill with signal 0), since a /proc mounted with hidepid hides
// other users' processes.
func probe(pid int) (proc, error) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return proc{gone: true}, nil
	}
	got, start, state, err := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, err
	}
	if got != pid {
		return proc{}, fmt.Errorf("/proc/%d/stat is of pid %d", pid, got)
	}
	return proc{exited: state == 'Z' || state == 'X', start: start}, nil
}

// readStat reads a /proc/PID/stat file: the pid (field 1), the state (field 3) and the
// start time in clock ticks after boot (field 22). The command name, field 2, is in
// parentheses and may hold any byte, so the fields are counted after its last ')'.
func readStat(path string) (pid int, start uint64, state byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, err
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return 0, 0, 0, fmt.Errorf("%s: no command name in %q", path, b)
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: pid: %w", path, err)
	}
	f := strings.Fields(string(b[end+1:])) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, 0, fmt.Errorf("%s: %d fields after the command name, want at least 20", path, len(f))
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: start time: %w", path, err)
	}
	return pid, start, f[0][0], nil
}

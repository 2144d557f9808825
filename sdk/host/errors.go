package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// Errors Start wraps, so that callers can tell start-up failures apart.
var (
	// ErrNotExecutable: the file is not an executable regular file.
	ErrNotExecutable = errors.New("not an executable file")
	// ErrNotPlugin: the program did not complete a Flowstate plugin handshake.
	ErrNotPlugin = errors.New("not a Flowstate plugin")
	// ErrExited: the plugin exited during start-up.
	ErrExited = errors.New("plugin exited during start-up")
	// ErrChecksumMismatch: the binary's SHA-256 is not the pinned one.
	ErrChecksumMismatch = errors.New("checksum mismatch")
	// ErrNoCommonProtocol: plugin and host share no protocol version.
	ErrNoCommonProtocol = errors.New("no common protocol version")
)

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\d+)`)

// startError explains why go-plugin could not start the plugin at path.
func (p *Plugin) startError(path string, hostProtocols []int, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Unrecognized remote plugin message") && !strings.Contains(msg, "Failed to read any lines"):
		line := firstLineAfter(msg, "Unrecognized remote plugin message:")
		return fmt.Errorf("plugin %s: %w: it printed %q on stdout instead of the handshake%s", path, ErrNotPlugin, line, p.stderr.format())
	case strings.Contains(msg, "plugin exited before we could connect"), strings.Contains(msg, "Failed to read any lines"):
		// The process closed its stdout without a handshake: it exited.
		if theirs, ok := p.stderr.pluginProtocols(); ok {
			return protocolError(path, theirs, hostProtocols)
		}
		return fmt.Errorf("plugin %s: %w (%s)%s", path, ErrExited, exitState(p.cmd), p.stderr.format())
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("plugin %s: %w: no handshake within the start timeout%s", path, ErrNotPlugin, p.stderr.format())
	case strings.Contains(msg, "incompatible API version"):
		var theirs []int
		if m := pluginVersionRE.FindStringSubmatch(msg); m != nil {
			v, _ := strconv.Atoi(m[1])
			theirs = []int{v}
		}
		return protocolError(path, theirs, hostProtocols)
	case strings.Contains(msg, "incompatible core API version"), strings.Contains(msg, "unsupported plugin protocol"):
		return fmt.Errorf("plugin %s: %w: %s", path, ErrNotPlugin, msg)
	}
	return fmt.Errorf("starting plugin %s: %w%s", path, err, p.stderr.format())
}

func protocolError(path string, plugin, host []int) error {
	return fmt.Errorf("plugin %s: %w: the plugin speaks protocol versions %v, the host speaks %v", path, ErrNoCommonProtocol, plugin, host)
}

// pluginProtocols finds the versions a plugin said it speaks when it found no common one.
func (t *tail) pluginProtocols() ([]int, bool) {
	for _, line := range t.lines() {
		if !strings.Contains(line, wire.ProtocolMismatchMessage) {
			continue
		}
		var entry map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		var vs []int
		if json.Unmarshal(entry[wire.PluginProtocolsKey], &vs) == nil {
			return vs, true
		}
	}
	return nil, false
}

// firstLineAfter returns the rest of the line of msg that follows marker.
func firstLineAfter(msg, marker string) string {
	_, rest, _ := strings.Cut(msg, marker)
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line)
}

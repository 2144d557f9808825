package jmstorage

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/sdk"
)

// Names on disk (with a dir) and in refs, as in Flink's checkpoint layout.
const (
	metadataName    = "_metadata"
	metadataTempPfx = "_metadata.inprogress-"
	checkpointPfx   = "chk-"
	savepointPfx    = "savepoint-"
	sharedName      = "shared"
	// refScheme starts the refs and pointers of state held in memory.
	refScheme = "jm:"
)

// localPath turns a plain path or a file:// URI into a clean absolute local path; other
// schemes are unsupported.
func localPath(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty path: %w", sdk.ErrInvalidArgument)
	}
	if i := strings.Index(s, ":"); i > 1 && !strings.ContainsAny(s[:i], `/\`) {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("malformed URI: %w: %w", sdk.ErrInvalidArgument, err)
		}
		if !strings.EqualFold(u.Scheme, "file") {
			return "", fmt.Errorf("unsupported scheme %q (want a local path or a file:// URI): %w", u.Scheme, sdk.ErrUnsupported)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("file URI with host %q: only local paths are supported: %w", u.Host, sdk.ErrInvalidArgument)
		}
		if u.Path == "" || !filepath.IsAbs(u.Path) {
			return "", fmt.Errorf("file URI without an absolute path: %w", sdk.ErrInvalidArgument)
		}
		return filepath.Clean(u.Path), nil
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", fmt.Errorf("make path absolute: %w", err)
	}
	return abs, nil
}

// checkJobID refuses job ids that cannot serve as one directory name.
func checkJobID(jobID string) error {
	switch {
	case jobID == "":
		return errorf(sdk.ErrInvalidArgument, "empty job id")
	case strings.Contains(jobID, ".."):
		return errorf(sdk.ErrInvalidArgument, "job id %q: must not contain \"..\"", jobID)
	case jobID == "." || strings.ContainsAny(jobID, "/\\\x00"):
		return errorf(sdk.ErrInvalidArgument, "job id %q: must not be \".\" or contain a path separator or NUL", jobID)
	}
	return nil
}

// checkpointName returns "chk-N".
func checkpointName(id int64) string { return checkpointPfx + strconv.FormatInt(id, 10) }

// parseCheckpointName returns N for a name "chk-N" (N a canonical non-negative decimal).
func parseCheckpointName(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, checkpointPfx)
	if !ok || digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// isSavepointName reports a "savepoint-..." directory name.
func isSavepointName(name string) bool {
	return strings.HasPrefix(name, savepointPfx) && len(name) > len(savepointPfx) && !strings.ContainsAny(name, "/\\")
}

// savepointName returns "savepoint-<first 6 chars of the job id>-<12 random hex>".
func savepointName(jobID string) (string, error) {
	prefix := jobID
	if r := []rune(jobID); len(r) > 6 {
		prefix = string(r[:6])
	}
	r, err := randomHex(6)
	if err != nil {
		return "", err
	}
	return savepointPfx + prefix + "-" + r, nil
}

// randomHex returns n random bytes as 2n hex characters.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// parsedRef is a ref "jm:<job>/<location>/<name>" taken apart.
type parsedRef struct {
	job, location, name string
}

// parseRef takes a jm: ref apart; ok is false for anything else or a ref whose job or
// location could not be a directory name.
func parseRef(ref string) (parsedRef, bool) {
	rest, ok := strings.CutPrefix(ref, refScheme)
	if !ok {
		return parsedRef{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || checkJobID(parts[0]) != nil || parts[2] == "" {
		return parsedRef{}, false
	}
	if _, isChk := parseCheckpointName(parts[1]); !isChk && parts[1] != sharedName && !isSavepointName(parts[1]) {
		return parsedRef{}, false
	}
	return parsedRef{job: parts[0], location: parts[1], name: parts[2]}, true
}

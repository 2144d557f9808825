package fsstorage

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
)

// Names inside a job's directory, as in Flink's FileSystemCheckpointStorage.
const (
	metadataName    = "_metadata"
	metadataTempPfx = "_metadata.inprogress-"
	sharedDirName   = "shared"
	taskOwnedName   = "taskowned"
	checkpointPfx   = "chk-"
	savepointPfx    = "savepoint-"
)

// localPath turns a plain path or a file:// URI into a clean absolute local path. An s3://
// URI is refused as unsupported in this version; so is any other scheme.
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
		switch strings.ToLower(u.Scheme) {
		case "file":
			if u.Host != "" && u.Host != "localhost" {
				return "", fmt.Errorf("file URI with host %q: only local paths are supported: %w", u.Host, sdk.ErrInvalidArgument)
			}
			if u.Path == "" || !filepath.IsAbs(u.Path) {
				return "", fmt.Errorf("file URI without an absolute path: %w", sdk.ErrInvalidArgument)
			}
			return filepath.Clean(u.Path), nil
		case "s3", "s3a", "s3n", "s3p":
			name, _, err := fsys.MuxName(s)
			if err != nil {
				return "", fmt.Errorf("%w: %w", sdk.ErrInvalidArgument, err)
			}
			return name, nil
		default:
			return "", fmt.Errorf("unsupported scheme %q (want a local path or a file:// URI): %w", u.Scheme, sdk.ErrUnsupported)
		}
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", fmt.Errorf("make path absolute: %w", err)
	}
	return abs, nil
}

// fileURI returns the file:// URI of an absolute local path.
func fileURI(p string) string {
	if u := fsys.MuxURI(p); u != "" {
		return u
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// pointerOf is the external form of a location's directory: its s3:// URI on S3, the
// local path otherwise.
func pointerOf(dir string) string {
	if u := fsys.MuxURI(dir); u != "" {
		return u
	}
	return dir
}

// within reports whether p is root or below it. Both must be clean absolute paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkJobID refuses job ids that cannot serve as one directory name.
func checkJobID(jobID string) error {
	switch {
	case jobID == "":
		return errorf(sdk.ErrInvalidArgument, nil, "empty job id")
	case jobID == "." || jobID == ".." || strings.Contains(jobID, ".."):
		return errorf(sdk.ErrInvalidArgument, nil, "job id %q: must not contain \"..\"", jobID)
	case strings.ContainsAny(jobID, "/\\\x00"):
		return errorf(sdk.ErrInvalidArgument, nil, "job id %q: must not contain a path separator or NUL", jobID)
	}
	return nil
}

// checkpointDirName returns "chk-N".
func checkpointDirName(id int64) string { return checkpointPfx + strconv.FormatInt(id, 10) }

// parseCheckpointDirName returns N for a name "chk-N" (N a canonical non-negative decimal).
func parseCheckpointDirName(name string) (int64, bool) {
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

// savepointDirName returns "savepoint-<first 6 chars of the job id>-<12 random hex>".
func savepointDirName(jobID string) (string, error) {
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

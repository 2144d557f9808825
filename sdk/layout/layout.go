// Package layout is Flink's checkpoint directory layout, for checkpoint storages that keep
// a job's checkpoints under a directory (or a key prefix):
//
//	<dir>/<job-id>/chk-<n>/_metadata      a completed checkpoint
//	<dir>/<job-id>/shared/                state several incremental checkpoints share
//	<dir>/<job-id>/taskowned/             state the tasks own
//	<dir>/<job-id>/_lease                 the job's lease record (sdk.LeaseStore), Flowstate's own
//	<savepoint-dir>/savepoint-<id>/       a savepoint
//
// fsstorage and jmstorage use it; a third-party storage that does too keeps checkpoints a
// Flink user, and the runner's `checkpoints list`, recognize.
//
// It imports only the contract (package sdk), never gRPC, the protocol, the server or the
// host end.
package layout

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

// Names inside a job's directory.
const (
	// MetadataFile is the file whose presence makes a checkpoint complete.
	MetadataFile = "_metadata"
	// MetadataTempPrefix starts the name metadata is written under before it is renamed
	// to MetadataFile.
	MetadataTempPrefix = "_metadata.inprogress-"
	// SharedDir holds the state streams of scope sdk.ScopeShared.
	SharedDir = "shared"
	// TaskOwnedDir holds state the tasks own.
	TaskOwnedDir = "taskowned"
	// CheckpointPrefix starts the directory of checkpoint n: "chk-<n>".
	CheckpointPrefix = "chk-"
	// SavepointPrefix starts the directory of a savepoint.
	SavepointPrefix = "savepoint-"
	// LeaseFile holds the job's lease record (sdk.LeaseStore). Flink has no such file;
	// like every name starting with '_' but MetadataFile, it is never a checkpoint.
	LeaseFile = "_lease"
)

// CheckpointDir returns the directory name of checkpoint id, "chk-<id>".
func CheckpointDir(id int64) string { return CheckpointPrefix + strconv.FormatInt(id, 10) }

// ParseCheckpointDir returns n for a name "chk-<n>" where n is a canonical non-negative
// decimal (no sign, no leading zero), and false for any other name.
func ParseCheckpointDir(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, CheckpointPrefix)
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

// CheckJobID refuses a job id that cannot serve as one directory name: empty, containing
// "..", a path separator or NUL. The error wraps sdk.ErrInvalidArgument.
func CheckJobID(jobID string) error {
	switch {
	case jobID == "":
		return fmt.Errorf("empty job id: %w", sdk.ErrInvalidArgument)
	case jobID == "." || strings.Contains(jobID, ".."):
		return fmt.Errorf("job id %q: must not be \".\" or contain \"..\": %w", jobID, sdk.ErrInvalidArgument)
	case strings.ContainsAny(jobID, "/\\\x00"):
		return fmt.Errorf("job id %q: must not contain a path separator or NUL: %w", jobID, sdk.ErrInvalidArgument)
	}
	return nil
}

// HasScheme reports whether s starts with a URI scheme ("file:", "s3:"), as opposed to a
// plain path (including a Windows drive letter, which is one letter long).
func HasScheme(s string) bool {
	i := strings.Index(s, ":")
	return i > 1 && !strings.ContainsAny(s[:i], `/\`)
}

// LocalPath turns a plain path or a file:// URI into a clean absolute local path. A file
// URI with a host other than localhost, or without an absolute path, wraps
// sdk.ErrInvalidArgument; any other scheme wraps sdk.ErrUnsupported.
func LocalPath(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty path: %w", sdk.ErrInvalidArgument)
	}
	if !HasScheme(s) {
		abs, err := filepath.Abs(s)
		if err != nil {
			return "", fmt.Errorf("make path absolute: %w", err)
		}
		return abs, nil
	}
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

// SavepointDir returns a new savepoint directory name for job jobID:
// "savepoint-<first 6 characters of the job id>-<12 random hex digits>", as Flink names them.
func SavepointDir(jobID string) (string, error) {
	prefix := jobID
	if r := []rune(jobID); len(r) > 6 {
		prefix = string(r[:6])
	}
	r, err := RandomHex(6)
	if err != nil {
		return "", err
	}
	return SavepointPrefix + prefix + "-" + r, nil
}

// IsSavepointDir reports whether name is a savepoint directory name: "savepoint-" and more,
// without a path separator.
func IsSavepointDir(name string) bool {
	return len(name) > len(SavepointPrefix) && strings.HasPrefix(name, SavepointPrefix) && !strings.ContainsAny(name, `/\`)
}

// RandomHex returns n random bytes as 2n hex digits, for names that must not collide
// (state files, savepoint directories, temporary files).
func RandomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random name: %w", err)
	}
	return hex.EncodeToString(b), nil
}

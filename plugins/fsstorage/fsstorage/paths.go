package fsstorage

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// localPath turns a plain path or a file:// URI into a clean absolute local path, and an
// s3:// URI (also s3a, s3n, s3p) into the name fsys.Mux routes to S3. Any other scheme is
// unsupported.
func localPath(s string) (string, error) {
	name, ok, err := fsys.MuxName(strings.TrimSpace(s))
	if err != nil {
		return "", fmt.Errorf("%w: %w", sdk.ErrInvalidArgument, err)
	}
	if ok {
		return name, nil
	}
	return layout.LocalPath(s)
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
	if err := layout.CheckJobID(jobID); err != nil {
		return wrapf(err, "checkpoint storage")
	}
	return nil
}

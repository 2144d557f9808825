package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HasDotDot reports whether the path or URI s has a ".." element, before any cleaning: a
// target or pointer that climbs out of the directory it names.
func HasDotDot(s string) bool {
	for _, elem := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if elem == ".." {
			return true
		}
	}
	return false
}

// Within reports whether p is root or below it. Both must be clean absolute names: local
// paths, or a storage's own slash names.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RealPath returns where the clean absolute local path p leads: the symbolic links of its
// deepest existing ancestor resolved (filepath.EvalSymlinks), and the rest of p, which
// does not exist yet, joined to that. A directory created at p is created there. A
// symbolic link on the way that leads nowhere is an error naming it, since what a
// directory created through it would be cannot be told.
func RealPath(p string) (string, error) {
	dir, rest := p, ""
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve the symbolic links of '%s': %w", p, err)
		}
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("'%s' is a symbolic link to a file that does not exist", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

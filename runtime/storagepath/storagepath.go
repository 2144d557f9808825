// Package storagepath places the locations of checkpoint storages, as users and storages
// write them (local paths, file:// URIs, URIs of other schemes such as s3://bucket/key),
// relative to each other: whether a savepoint target or a checkpoint to dispose of lies in
// a configured directory. Local locations compare where they lead, after symbolic links.
//
// It imports only sdk/layout, for the names of the layout's directories, and must never
// import anything of the runtime or a plugin: the runner and the offline tools both use it.
package storagepath

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/flowstate/flowstate/sdk/layout"
)

// Local returns the clean local path of s when it is a local location: an absolute path or
// a file:// URI (ok true); ok is false, with no error, for a URI of another scheme. A
// relative path or one with a ".." element is an error naming s: such a location means
// something else from another working directory, or climbs out of the one it names.
func Local(s string) (p string, ok bool, err error) {
	s = strings.TrimSpace(s)
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return "", false, fmt.Errorf("%q holds a control character (%U at byte %d): a location is one printable line", s, []rune(s[i:])[0], i)
	}
	if layout.HasDotDot(s) {
		return "", false, fmt.Errorf("%q has a \"..\" element; name the directory itself", s)
	}
	if !layout.HasScheme(s) && !filepath.IsAbs(s) {
		return "", false, fmt.Errorf("%q is a relative path; give an absolute path or a file:// URI", s)
	}
	if layout.HasScheme(s) && !strings.HasPrefix(strings.ToLower(s), "file:") {
		return "", false, nil
	}
	p, err = layout.LocalPath(s)
	if err != nil {
		return "", false, fmt.Errorf("%q: %w", s, err)
	}
	return p, true, nil
}

// Within reports whether the location p is the directory root or lies below it. Local
// locations compare after the symbolic links of their deepest existing ancestors
// (layout.RealPath); other URIs compare by scheme (s3a, s3n and s3p are s3), host (an S3
// bucket) and path, as written. A local location is never within a URI of another scheme.
func Within(root, p string) (bool, error) {
	rs, rp, err := place(root)
	if err != nil {
		return false, err
	}
	ps, pp, err := place(p)
	if err != nil {
		return false, err
	}
	return rs == ps && layout.Within(rp, pp), nil
}

// place returns the scheme ("" for local) and the absolute slash path a location compares
// by.
func place(s string) (scheme, p string, err error) {
	local, ok, err := Local(s)
	if err != nil {
		return "", "", err
	}
	if ok {
		real, err := layout.RealPath(local)
		return "", real, err
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", "", fmt.Errorf("malformed URI %q: %w", s, err)
	}
	scheme = strings.ToLower(u.Scheme)
	switch scheme {
	case "s3a", "s3n", "s3p":
		scheme = "s3"
	}
	return scheme, path.Join("/", u.Host, u.Path), nil
}

// InDirectory reports whether the location s names a place in a directory tree: a local
// path, a file:// URI, or a URI with an authority (s3://bucket/key). An opaque pointer such
// as jmstorage's "jm:job/chk-3" names an entry of a storage's own, in no directory.
func InDirectory(s string) bool {
	s = strings.TrimSpace(s)
	if !layout.HasScheme(s) {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Opaque == ""
}

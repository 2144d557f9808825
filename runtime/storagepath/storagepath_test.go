package storagepath

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLocal: absolute paths and file:// URIs are local, other schemes are not, and a
// relative path or a ".." element is an error naming the location.
func TestLocal(t *testing.T) {
	for in, want := range map[string]string{"/a/b": "/a/b", "file:///a/b/": "/a/b", " /a//b ": "/a/b"} {
		if got, ok, err := Local(in); err != nil || !ok || got != want {
			t.Errorf("Local(%q) = %q, %v, %v; want %q", in, got, ok, err, want)
		}
	}
	if _, ok, err := Local("s3://bucket/key"); ok || err != nil {
		t.Errorf("Local of an s3:// URI: %v, %v; want not local, no error", ok, err)
	}
	for _, in := range []string{"rel/dir", "./x", "/a/../b", "file:///a/../b", "s3://bucket/a/../b"} {
		if _, _, err := Local(in); err == nil || !strings.Contains(err.Error(), in) {
			t.Errorf("Local(%q): %v; want an error naming it", in, err)
		}
	}
	// A control character (a newline splitting a log line, an escape) is refused, in local
	// paths and URIs alike, naming the location quoted.
	for _, in := range []string{"/sp/a\nb", "file:///sp/a\x1b[2Jb", "s3://bucket/a\tb"} {
		if _, _, err := Local(in); err == nil || !strings.Contains(err.Error(), strconv.Quote(in)) || !strings.Contains(err.Error(), "control character") {
			t.Errorf("Local(%q): %v; want an error naming it and the control character", in, err)
		}
	}
}

// TestWithin: locations compare by where they lead (a symbolic link into a directory is in
// it), URIs by scheme, bucket and key, and a sibling sharing a prefix is not within.
func TestWithin(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sp")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		root, p string
		want    bool
	}{
		{root, root, true},
		{root, filepath.Join(root, "x", "y"), true},
		{root, filepath.Join(link, "x"), true},
		{"file://" + root, filepath.Join(root, "x"), true},
		{root, root + "2", false},
		{root, dir, false},
		{"s3://b/sp", "s3a://b/sp/x", true},
		{"s3://b/sp", "s3://b/spx", false},
		{"s3://b/sp", "s3://c/sp/x", false},
		{root, "s3://b" + root, false},
	}
	for _, c := range cases {
		if got, err := Within(c.root, c.p); err != nil || got != c.want {
			t.Errorf("Within(%q, %q) = %v, %v; want %v", c.root, c.p, got, err, c.want)
		}
	}
	if !InDirectory("/a") || !InDirectory("s3://b/k") || InDirectory("jm:wc/chk-3") {
		t.Errorf("InDirectory: want true for a path and an s3:// URI, false for jm:wc/chk-3")
	}
}

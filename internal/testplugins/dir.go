package testplugins

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Main is the TestMain of a package whose tests start the named test plugins: it builds
// them (BuildNamed) into a temporary directory, stores its path in *dir, runs the tests
// and exits with their code once it has removed the directory. A failed build exits at
// once, saying why.
func Main(m *testing.M, dir *string, names ...string) {
	d, err := os.MkdirTemp("", "flowstate-testplugins-")
	if err == nil {
		if err = BuildNamed(d, names...); err != nil {
			os.RemoveAll(d)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// Link puts the named plugin binaries (flowstate-plugin-NAME) of directory src into
// directory dir under the same names, as LinkAs does.
func Link(t testing.TB, dir, src string, names ...string) {
	t.Helper()
	for _, n := range names {
		LinkAs(t, dir, src, n, n)
	}
}

// LinkAs puts plugin binary name of directory src into directory dir as the binary of
// plugin as (flowstate-plugin-AS): a hard link, or a copy where src lies on another file
// system. A binary under another plugin's name is how a test gives a plugin directory a
// plugin that is not what its name says.
func LinkAs(t testing.TB, dir, src, name, as string) {
	t.Helper()
	from, to := filepath.Join(src, Prefix+name), filepath.Join(dir, Prefix+as)
	if err := os.Link(from, to); err == nil {
		return
	}
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatalf("plugin %s into %s as %s: %v", name, dir, as, err)
	}
}

package deps

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// modules are the directories of the repository's three modules, relative to its root.
var modules = []string{".", "sdk", filepath.Join("examples", "thirdparty")}

// TestEveryPackageHasADocComment: every package of the three modules, commands and
// test-only packages included, has a package doc comment that starts as Go's convention
// says ("Command X" for a main package, "Package name" for the others). That the comment
// says what the package owns and what it must never import is for review; the arrows
// themselves are what the other tests of this package check.
func TestEveryPackageHasADocComment(t *testing.T) {
	checked := 0
	for _, m := range modules {
		dir := filepath.Join(root(t), m)
		cmd := exec.Command("go", "list", "-json=ImportPath,Name,Doc", "./...")
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct{ ImportPath, Name, Doc string }
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("go list in %s: %v", dir, err)
			}
			checked++
			want := "Package " + p.Name + " "
			if p.Name == "main" {
				want = "Command "
			}
			switch {
			case p.Doc == "":
				t.Errorf("%s has no package doc comment: say what it owns and what it must never import", p.ImportPath)
			case !strings.HasPrefix(p.Doc, want):
				t.Errorf("%s: its doc comment starts %q, want %q", p.ImportPath, p.Doc, want+"...")
			}
		}
	}
	if checked == 0 {
		t.Fatal("go list found no packages")
	}
}

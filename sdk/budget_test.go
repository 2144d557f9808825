package sdk

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// maxDocLines is the budget of package sdk's contract: the lines `go doc -short` lists
// (docs/architecture.md, "Packages"; docs/plugin-authors.md lists them).
const maxDocLines = 40

// TestContractStaysWithinItsBudget counts the lines `go doc -short` prints for the package,
// as it prints them: one per const or var group, function and type, and one per constant,
// variable or function go doc shows under its type. A new capability combines with what
// is there, or the budget and its docs change with a reason.
func TestContractStaysWithinItsBudget(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/flowstate/flowstate/sdk")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, v := range append(p.Consts, p.Vars...) {
		lines = append(lines, strings.Join(v.Names, ","))
	}
	for _, f := range p.Funcs {
		lines = append(lines, f.Name)
	}
	for _, ty := range p.Types {
		lines = append(lines, ty.Name)
		for _, v := range append(ty.Consts, ty.Vars...) {
			lines = append(lines, "  "+strings.Join(v.Names, ","))
		}
		for _, f := range ty.Funcs {
			lines = append(lines, "  "+f.Name)
		}
	}
	if len(lines) > maxDocLines {
		t.Fatalf("go doc -short lists %d lines, the budget is %d:\n%s", len(lines), maxDocLines, strings.Join(lines, "\n"))
	}
	t.Logf("%d of %d lines", len(lines), maxDocLines)
}

package memdir_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/examples/thirdparty/memdir"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestConformance runs the checkpoint storage suite of the conformance kit against memdir,
// with small state inline and with every stream a file of its own.
func TestConformance(t *testing.T) {
	for name, opts := range map[string]sdk.Options{
		"defaults":  {sdk.OptionCheckpointDir: "/checkpoints"},
		"no-inline": {sdk.OptionCheckpointDir: "/checkpoints", sdk.OptionSavepointDir: "/savepoints", sdk.OptionDataInlineThreshold: "0"},
	} {
		t.Run(name, func(t *testing.T) {
			sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				p := memdir.New()
				if err := p.Configure(context.Background(), opts); err != nil {
					t.Fatalf("Configure(%v): %v", opts, err)
				}
				return p
			})
		})
	}
}

// TestGuideQuotesThisFile checks that docs/plugin-authors.md quotes memdir.go as it is.
func TestGuideQuotesThisFile(t *testing.T) {
	src, err := os.ReadFile("memdir.go")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../../docs/plugin-authors.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- examples/thirdparty/memdir/memdir.go -->\n```go\n"
	_, quoted, found := strings.Cut(string(guide), marker)
	quoted, _, closed := strings.Cut(quoted, "```\n")
	if !found || !closed {
		t.Fatalf("docs/plugin-authors.md has no code block after %q", strings.TrimSpace(marker))
	}
	if quoted != string(src) {
		t.Fatalf("docs/plugin-authors.md quotes an older memdir.go: copy the file into the code block after %q", strings.Split(marker, "\n")[0])
	}
}

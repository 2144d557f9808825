package client

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

type locatingReader struct {
	sdk.StateReader
	path string
}

func (l locatingReader) LocalStatePath(context.Context, sdk.StreamStateHandle) (string, error) {
	return l.path, nil
}

// TestLocalPathsOnlyForPluginsThatReadThem: the host answers an open with a local file only
// when the plugin said it can read one, the reader locates files, and the handle is not
// inline.
func TestLocalPathsOnlyForPluginsThatReadThem(t *testing.T) {
	h := sdk.StreamStateHandle{Ref: "file:///x/state", Size: 1}
	loc := locatingReader{path: "/x/state"}
	if got := localPath(context.Background(), loc, h, true); got != "/x/state" {
		t.Fatalf("plugin that reads files: local path %q, want /x/state", got)
	}
	if got := localPath(context.Background(), loc, h, false); got != "" {
		t.Fatalf("plugin of an older SDK: local path %q, want none", got)
	}
	if got := localPath(context.Background(), loc, sdk.StreamStateHandle{Inline: []byte{1}, Size: 1}, true); got != "" {
		t.Fatalf("inline handle: local path %q, want none", got)
	}
	if got := localPath(context.Background(), loc.StateReader, h, true); got != "" {
		t.Fatalf("a reader that locates nothing: local path %q, want none", got)
	}
}

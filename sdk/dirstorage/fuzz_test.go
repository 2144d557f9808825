package dirstorage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk/layout"
)

// FuzzResolveCheckpoint resolves arbitrary pointers against a checkpoint directory holding
// one completed checkpoint, one incomplete one and a stray _metadata outside any
// checkpoint: resolution never panics, and what resolves is a directory whose _metadata
// exists as a regular file, never a half-written checkpoint.
func FuzzResolveCheckpoint(f *testing.F) {
	s, dir := newConfiguredF(f)
	a, err := s.CreateCheckpointStorage(context.Background(), "job")
	if err != nil {
		f.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(context.Background()); err != nil {
		f.Fatal(err)
	}
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), 1)
	if err != nil {
		f.Fatal(err)
	}
	m, err := loc.CreateMetadataOutputStream(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	m.Write([]byte("metadata"))
	if _, err := m.CloseAndFinalize(context.Background()); err != nil {
		f.Fatal(err)
	}
	half := filepath.Join(dir, "job", "chk-2")
	os.MkdirAll(half, 0o755)
	os.WriteFile(filepath.Join(half, layout.MetadataTempPrefix+"1234"), []byte("half"), 0o644)
	for _, seed := range []string{
		dir + "/job/chk-1", dir + "/job/chk-1/_metadata", "file://" + dir + "/job/chk-1", half,
		half + "/_metadata", dir + "/job/chk-1/../chk-2", "file://" + dir + "/job/../job/chk-1/",
		"file://host" + dir, "s3://bucket/x", "relative/chk-1", "", "file:", "file:///", "::", "%zz",
		"file://" + dir + "/job/chk-1/%2e%2e/chk-2", dir + "/job/chk-1/\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, pointer string) {
		c, err := s.ResolveCheckpoint(context.Background(), pointer)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "dirstorage: ") {
				t.Fatalf("error without the plugin's name: %v", err)
			}
			return
		}
		if !filepath.IsAbs(c.ExternalPointer) || filepath.Clean(c.ExternalPointer) != c.ExternalPointer {
			t.Fatalf("pointer %q resolved to %q: not a clean absolute path", pointer, c.ExternalPointer)
		}
		meta := filepath.Join(c.ExternalPointer, layout.MetadataFile)
		if c.Metadata.Ref != s.ref(meta) {
			t.Fatalf("pointer %q resolved to metadata %q, want %q", pointer, c.Metadata.Ref, s.ref(meta))
		}
		info, err := os.Lstat(meta)
		if err != nil || !info.Mode().IsRegular() || info.Size() != c.Metadata.Size {
			t.Fatalf("pointer %q resolved to %s without a whole metadata file: %v", pointer, c.ExternalPointer, err)
		}
	})
}

// newConfiguredF is newConfigured for a fuzz target.
func newConfiguredF(f *testing.F) (*Storage, string) {
	dir := filepath.Join(f.TempDir(), "ckpt")
	s, err := configure(Local{}, map[string]string{"dir": dir})
	if err != nil {
		f.Fatal(err)
	}
	return s, dir
}

package fsys

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// TestMuxNames checks the conversions between URIs and Mux names, and that path functions
// keep S3 names S3 names.
func TestMuxNames(t *testing.T) {
	name, ok, err := MuxName("s3a://bucket/ckpts/")
	if err != nil || !ok || name != "s3:/bucket/ckpts" {
		t.Fatalf("MuxName(s3a://bucket/ckpts/) = %q, %v, %v", name, ok, err)
	}
	joined := filepath.Join(name, "job", "chk-3", "_metadata")
	if !IsMuxS3Name(joined) || MuxURI(joined) != "s3://bucket/ckpts/job/chk-3/_metadata" {
		t.Errorf("Join kept %q, URI %q", joined, MuxURI(joined))
	}
	if d := filepath.Dir(filepath.Dir(joined)); MuxURI(d) != "s3://bucket/ckpts/job" {
		t.Errorf("Dir twice: %q", d)
	}
	if rel, err := filepath.Rel(name, joined); err != nil || rel != "job/chk-3/_metadata" {
		t.Errorf("Rel: %q, %v", rel, err)
	}
	if _, ok, err := MuxName("/local/path"); ok || err != nil {
		t.Errorf("MuxName of a local path: ok=%v err=%v, want neither", ok, err)
	}
	if _, ok, err := MuxName("s3://Bad_Bucket/x"); !ok || err == nil {
		t.Errorf("MuxName of a bad bucket: ok=%v err=%v, want ok and an error", ok, err)
	}
	if MuxURI("/local/path") != "" {
		t.Errorf("MuxURI of a local path: %q, want empty", MuxURI("/local/path"))
	}
}

// TestMuxRouting checks that local names reach the local FS and S3 names fail clearly
// when S3 is not configured.
func TestMuxRouting(t *testing.T) {
	m := Mux{Local: dirstorage.Local{}}
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := writeFile(m, p, []byte("local"), 2); err != nil {
		t.Fatalf("write through the mux: %v", err)
	}
	checkContent(t, m, p, []byte("local"))
	entries, err := m.List(dir)
	if err != nil || len(entries) != 1 || entries[0].Name != "f" {
		t.Errorf("List(%s) = %+v, %v", dir, entries, err)
	}
	_, err = m.Stat("s3:/bucket/key")
	if err == nil || !strings.Contains(err.Error(), "s3://bucket/key") || !strings.Contains(err.Error(), OptionS3Endpoint) {
		t.Errorf("Stat of an S3 name without S3: %v, want an error naming the URI and %s", err, OptionS3Endpoint)
	}
	if err := m.RenameNoReplace(p, "s3:/bucket/key"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("rename from local to S3: %v, want fs.ErrInvalid", err)
	}
}

// TestMuxS3 writes and reads an object through the mux on the test server.
func TestMuxS3(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	m := Mux{Local: dirstorage.Local{}, S3: s}
	name := "s3:/" + bucket + "/via/mux"
	mustWrite(t, m, name, []byte("through the mux"))
	checkContent(t, s, "/"+bucket+"/via/mux", []byte("through the mux"))
	if info, err := m.Stat("s3:/" + bucket + "/via"); err != nil || !info.IsDir {
		t.Errorf("Stat of the prefix through the mux: %+v, %v", info, err)
	}
}

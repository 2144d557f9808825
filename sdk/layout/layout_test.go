package layout

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestCheckpointDirRoundTrips(t *testing.T) {
	for _, id := range []int64{0, 1, 42, 1 << 40} {
		got, ok := ParseCheckpointDir(CheckpointDir(id))
		if !ok || got != id {
			t.Fatalf("ParseCheckpointDir(CheckpointDir(%d)) = %d, %v", id, got, ok)
		}
	}
	for _, name := range []string{"chk-", "chk-01", "chk--1", "chk-1a", "chk-+1", "chk-99999999999999999999", "savepoint-1", "1"} {
		if n, ok := ParseCheckpointDir(name); ok {
			t.Errorf("ParseCheckpointDir(%q) = %d, true; want false", name, n)
		}
	}
}

func TestCheckJobID(t *testing.T) {
	for _, id := range []string{"wordcount", "job-1", "a.b"} {
		if err := CheckJobID(id); err != nil {
			t.Errorf("CheckJobID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "a/../b", "a/b", `a\b`, "a\x00b"} {
		err := CheckJobID(id)
		if !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("CheckJobID(%q) = %v; want an error wrapping sdk.ErrInvalidArgument", id, err)
		}
	}
}

func TestLocalPath(t *testing.T) {
	abs, _ := filepath.Abs("rel/dir")
	for in, want := range map[string]string{
		"/tmp/x/../ckpt":             "/tmp/ckpt",
		"file:///tmp/ckpt":           "/tmp/ckpt",
		"file://localhost/tmp/ckpt/": "/tmp/ckpt",
		"rel/dir":                    abs,
	} {
		if got, err := LocalPath(in); err != nil || got != want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, kind := range map[string]error{
		"":                     sdk.ErrInvalidArgument,
		"file://host/tmp/ckpt": sdk.ErrInvalidArgument,
		"file:relative":        sdk.ErrInvalidArgument,
		"hdfs://namenode/ckpt": sdk.ErrUnsupported,
		"s3://bucket/ckpt":     sdk.ErrUnsupported,
	} {
		if _, err := LocalPath(in); !errors.Is(err, kind) {
			t.Errorf("LocalPath(%q): %v; want an error wrapping %v", in, err, kind)
		}
	}
}

func TestSavepointDir(t *testing.T) {
	name, err := SavepointDir("wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if len(name) != len("savepoint-wordco-")+12 || name[:len("savepoint-wordco-")] != "savepoint-wordco-" {
		t.Fatalf("SavepointDir(wordcount) = %q, want savepoint-wordco-<12 hex>", name)
	}
	if !IsSavepointDir(name) {
		t.Fatalf("IsSavepointDir(%q) = false", name)
	}
	for _, bad := range []string{"savepoint-", "chk-1", "savepoint-a/b", `savepoint-a\b`, "shared"} {
		if IsSavepointDir(bad) {
			t.Errorf("IsSavepointDir(%q) = true", bad)
		}
	}
}

package dirstorage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// fullStorage returns a storage whose checkpoint directory has 32 KiB of free space: on a
// real tmpfs filled up when the test can mount one (root), else on the local disk with
// every file failing its writes after 32 KiB (faultFS).
func fullStorage(t *testing.T) (*Storage, string) {
	t.Helper()
	mnt := t.TempDir()
	if os.Geteuid() == 0 && os.Getenv("FLOWSTATE_TEST_NO_TMPFS") == "" {
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).Run(); err == nil {
			t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
			dir := filepath.Join(mnt, "ckpt")
			s, err := configure(Local{}, sdk.Options{sdk.OptionCheckpointDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			a := newJob(t, s, "job")
			a.Close()
			f, _ := os.Create(filepath.Join(mnt, "filler"))
			f.Write(make([]byte, 1<<20-96<<10)) // fails at the limit, leaving a little room
			f.Close()
			t.Log("tmpfs of 1 MiB, filled")
			return s, dir
		}
	}
	s, dir := newConfigured(t, nil)
	s.fs = &faultFS{failAfter: 32 << 10}
	t.Log("no tmpfs: injected ENOSPC after 32 KiB per file")
	return s, dir
}

// TestOutOfSpaceNeverPublishes runs out of space while writing checkpoint state and, in a
// second checkpoint, while writing its metadata: each failure is an error wrapping ENOSPC
// that names the file, and neither checkpoint resolves, is listed, or leaves a temporary
// metadata file.
func TestOutOfSpaceNeverPublishes(t *testing.T) {
	ctx := context.Background()
	s, dir := fullStorage(t)
	a := newJob(t, s, "job")
	big := bytes.Repeat([]byte("x"), 512<<10)

	loc1, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := loc1.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := out.Write(big)
	if werr == nil {
		_, werr = out.CloseAndGetHandle(ctx)
	}
	if !errors.Is(werr, syscall.ENOSPC) || !strings.Contains(werr.Error(), "chk-1") {
		t.Fatalf("state write on a full disk: %v, want ENOSPC naming the file", werr)
	}
	out.Close()

	loc2, err := a.InitializeLocationForCheckpoint(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loc2.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, merr := m.Write(big)
	if merr == nil {
		_, merr = m.CloseAndFinalize(ctx)
	}
	if !errors.Is(merr, syscall.ENOSPC) || !strings.Contains(merr.Error(), "metadata") {
		t.Fatalf("metadata write on a full disk: %v, want ENOSPC naming the metadata file", merr)
	}
	m.Close()

	for _, id := range []string{"chk-1", "chk-2"} {
		p := filepath.Join(dir, "job", id)
		if _, err := s.ResolveCheckpoint(ctx, p); !errors.Is(err, sdk.ErrNotFound) {
			t.Errorf("%s resolves after failing: %v", id, err)
		}
		if temps, _ := filepath.Glob(filepath.Join(p, layout.MetadataTempPrefix+"*")); len(temps) > 0 {
			t.Errorf("temporary metadata left: %v", temps)
		}
	}
	if list, err := a.ListCompletedCheckpoints(ctx); err != nil || len(list) != 0 {
		t.Fatalf("completed checkpoints after failures: %v, %v", list, err)
	}
}

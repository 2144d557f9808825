package disaggregated

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCacheDiskFull: a table that does not fit the cache's disk (a real 1 MiB tmpfs)
// fails its download naming the table and the full disk, leaves no partial file, and
// breaks nothing: a table that fits is fetched next, and the big one once space is freed.
// Mounting needs root; without it the test says so and ends (CI runs as root).
func TestCacheDiskFull(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs for the cache needs root; CI runs as root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a 1 MiB tmpfs at %s as root: %v: %s", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	remote, err := openRemote(context.Background(), "file://"+t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(name string, size int) uint32 {
		data := bytes.Repeat([]byte{byte(len(name))}, size)
		if err := remote.Create(ctx, name, bytes.NewReader(data), int64(size)); err != nil {
			t.Fatal(err)
		}
		return crc32.Checksum(data, castagnoli)
	}
	bigCRC, smallCRC := put("big.ldb", 3<<20), put("small.ldb", 100<<10)
	c, err := newCache(dir, 64<<20) // the bound is not what stops it: the disk is
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.acquire(ctx, remote, "big.ldb", 3<<20, bigCRC)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "big.ldb") {
		t.Fatalf("fetching a 3 MiB table into a 1 MiB disk: %v, want ENOSPC naming the table", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("after the failed fetch the cache holds %v, want nothing", entries)
	}
	f, e, err := c.acquire(ctx, remote, "small.ldb", 100<<10, smallCRC)
	if err != nil {
		t.Fatalf("a table that fits, after the full disk: %v", err)
	}
	f.Close()
	c.release(e)
	if out, err := exec.Command("mount", "-o", "remount,size=8m", dir).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, out)
	}
	f, e, err = c.acquire(ctx, remote, "big.ldb", 3<<20, bigCRC)
	if err != nil {
		t.Fatalf("the big table once the disk has room: %v (a failed fetch must not stick)", err)
	}
	f.Close()
	c.release(e)
}

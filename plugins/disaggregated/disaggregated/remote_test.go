package disaggregated

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// TestRemoteContract holds each Remote to the doc comments of the interface: the file://
// one, and the S3 one below a prefix and at a bucket's root, on the test S3 server.
func TestRemoteContract(t *testing.T) {
	t.Run("file", func(t *testing.T) { checkRemote(t, fileTestStore(t)) })
	t.Run("s3", func(t *testing.T) { checkRemote(t, s3TestStore(t)) })
	t.Run("s3-bucket-root", func(t *testing.T) {
		bucket, opts := s3TestBucket(t)
		opts[OptionRemote] = "s3://" + bucket
		checkRemote(t, testStore(opts))
	})
}

// checkRemote runs the contract's checks on a fresh, empty store.
func checkRemote(t *testing.T, s testStore) {
	r := s.open(t)
	ctx := context.Background()
	t.Run("create-once", func(t *testing.T) { checkCreateOnce(t, ctx, r) })
	t.Run("create-race", func(t *testing.T) { checkCreateRace(t, ctx, r) })
	t.Run("create-incomplete", func(t *testing.T) { checkCreateIncomplete(t, ctx, r) })
	t.Run("list", func(t *testing.T) { checkList(t, ctx, r) })
	t.Run("missing", func(t *testing.T) { checkMissing(t, ctx, r) })
	t.Run("names", func(t *testing.T) {
		for _, name := range []string{"", "../x", "/abs", "a/../../x", "a//b", "a/./b", "a/", "."} {
			if err := r.Create(ctx, name, strings.NewReader("x"), 1); err == nil || errors.Is(err, fs.ErrExist) {
				t.Errorf("Create(%q) = %v, want the name refused", name, err)
			}
		}
	})
	t.Run("string", func(t *testing.T) {
		if got := r.String(); got != s.uri() || strings.Contains(got, testS3SecretKey) || strings.Contains(got, testS3AccessKey) {
			t.Fatalf("String() = %q, want the URI %q and no credentials", got, s.uri())
		}
	})
}

// create creates name with body, failing t on an error.
func create(t *testing.T, ctx context.Context, r Remote, name string, body []byte) {
	t.Helper()
	if err := r.Create(ctx, name, bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatalf("Create %s: %v", name, err)
	}
}

// contents reads the object name whole.
func contents(t *testing.T, ctx context.Context, r Remote, name string) []byte {
	t.Helper()
	rc, err := r.Open(ctx, name)
	if err != nil {
		t.Fatalf("Open %s: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

// checkCreateOnce: a second Create of a name fails with fs.ErrExist and leaves the first
// object's bytes, for an object of one part and one larger than the S3 part size (a
// multipart upload, completed only if the name is free).
func checkCreateOnce(t *testing.T, ctx context.Context, r Remote) {
	for _, size := range []int{5, 9 << 20} {
		name := fmt.Sprintf("once/%d.ldb", size)
		first := bytes.Repeat([]byte("1"), size)
		create(t, ctx, r, name, first)
		second := bytes.Repeat([]byte("2"), size+1)
		if err := r.Create(ctx, name, bytes.NewReader(second), int64(len(second))); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), name) {
			t.Fatalf("second Create of %s (%d bytes): %v, want an error wrapping fs.ErrExist naming it", name, size, err)
		}
		if n, err := r.Size(ctx, name); n != int64(size) || err != nil {
			t.Fatalf("Size %s = %d, %v; want %d", name, n, err, size)
		}
		if !bytes.Equal(contents(t, ctx, r, name), first) {
			t.Fatalf("%s does not hold the first Create's %d bytes", name, size)
		}
	}
}

// checkCreateRace: of writers creating one name at once, exactly one wins, the others get
// fs.ErrExist, and the object holds the winner's bytes whole.
func checkCreateRace(t *testing.T, ctx context.Context, r Remote) {
	const writers = 8
	start := make(chan struct{})
	errs := make([]chan error, writers)
	for i := range writers {
		errs[i] = make(chan error, 1)
		go func() {
			b := bytes.Repeat([]byte{byte('a' + i)}, 1<<20)
			<-start
			errs[i] <- r.Create(ctx, "race/1.ldb", bytes.NewReader(b), int64(len(b)))
		}()
	}
	close(start)
	winner := -1
	for i := range writers {
		switch err := <-errs[i]; {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created race/1.ldb", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Fatalf("Create of writer %d: %v, want success or fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created race/1.ldb")
	}
	if b := contents(t, ctx, r, "race/1.ldb"); !bytes.Equal(b, bytes.Repeat([]byte{byte('a' + winner)}, 1<<20)) {
		t.Fatalf("race/1.ldb holds %d bytes, not the winner's (writer %d) 1 MiB", len(b), winner)
	}
}

// checkCreateIncomplete: a Create whose reader gives fewer bytes than its size, or whose
// context is cancelled, fails and leaves no object.
func checkCreateIncomplete(t *testing.T, ctx context.Context, r Remote) {
	if err := r.Create(ctx, "short/1.ldb", strings.NewReader("abc"), 5); err == nil {
		t.Fatal("Create of 3 bytes said to be 5 succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Create(cancelled, "short/2.ldb", strings.NewReader("abc"), 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with a cancelled context: %v, want context.Canceled", err)
	}
	if names, err := r.List(ctx, "short/"); err != nil || len(names) != 0 {
		t.Fatalf("after failed creates the store lists %v (%v), want nothing", names, err)
	}
}

// checkList: List returns exactly the objects whose names start with the prefix, sorted,
// at any depth, and forgets deleted ones; deleting a name that only prefixes others
// deletes nothing.
func checkList(t *testing.T, ctx context.Context, r Remote) {
	names := []string{"l/b.ldb", "l/a/2.ldb", "l/a/1.ldb", "l/ab/3.ldb", "l/a/c/d/4.ldb", "l/a.ldb"}
	for _, n := range names {
		create(t, ctx, r, n, []byte(n))
	}
	for prefix, want := range map[string][]string{
		"l/":       {"l/a.ldb", "l/a/1.ldb", "l/a/2.ldb", "l/a/c/d/4.ldb", "l/ab/3.ldb", "l/b.ldb"},
		"l/a":      {"l/a.ldb", "l/a/1.ldb", "l/a/2.ldb", "l/a/c/d/4.ldb", "l/ab/3.ldb"},
		"l/a/":     {"l/a/1.ldb", "l/a/2.ldb", "l/a/c/d/4.ldb"},
		"l/a/c":    {"l/a/c/d/4.ldb"},
		"l/a/c/d/": {"l/a/c/d/4.ldb"},
		"l/a/2":    {"l/a/2.ldb"},
		"l/b.ldb":  {"l/b.ldb"},
		"l/z":      nil,
		"nothing/": nil,
	} {
		if got, err := r.List(ctx, prefix); err != nil || !slices.Equal(got, want) {
			t.Errorf("List(%q) = %v, %v; want %v", prefix, got, err, want)
		}
	}
	if all, err := r.List(ctx, ""); err != nil || !slices.IsSorted(all) || len(all) < len(names) {
		t.Errorf("List(\"\") = %v, %v; want every object, sorted", all, err)
	}
	for _, n := range []string{"l/a/2.ldb", "l/a/2.ldb", "l/a/c", "l/a/c/d"} {
		if err := r.Delete(ctx, n); err != nil {
			t.Fatalf("Delete %s: %v", n, err)
		}
	}
	want := []string{"l/a.ldb", "l/a/1.ldb", "l/a/c/d/4.ldb", "l/ab/3.ldb"}
	if got, err := r.List(ctx, "l/a"); err != nil || !slices.Equal(got, want) {
		t.Fatalf("after deletes List(\"l/a\") = %v, %v; want %v", got, err, want)
	}
}

// checkMissing: Open and Size of a missing object, or of a name that only prefixes
// others, fail with an error wrapping fs.ErrNotExist that names it; Delete of one is no
// error.
func checkMissing(t *testing.T, ctx context.Context, r Remote) {
	create(t, ctx, r, "m/dir/1.ldb", []byte("x"))
	for _, name := range []string{"m/none.ldb", "m/dir"} {
		if rc, err := r.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), name) {
			if err == nil {
				rc.Close()
			}
			t.Errorf("Open %s: %v, want an error wrapping fs.ErrNotExist naming it", name, err)
		}
		if n, err := r.Size(ctx, name); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), name) {
			t.Errorf("Size %s = %d, %v; want an error wrapping fs.ErrNotExist naming it", name, n, err)
		}
		if err := r.Delete(ctx, name); err != nil {
			t.Errorf("Delete %s: %v, want nil", name, err)
		}
	}
	if got := contents(t, ctx, r, "m/dir/1.ldb"); string(got) != "x" {
		t.Fatalf("m/dir/1.ldb holds %q after Delete of m/dir, want \"x\"", got)
	}
}

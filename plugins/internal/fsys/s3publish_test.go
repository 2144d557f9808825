package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// race runs op(i) for i in [0, n) at the same time and returns the index of the single
// success, failing the test unless exactly one succeeded and all others failed with an
// error wrapping fs.ErrExist.
func race(t *testing.T, what string, n int, op func(i int) error) int {
	t.Helper()
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = op(i)
		}()
	}
	start.Done()
	done.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("%s: both %d and %d succeeded, want exactly one", what, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("%s: %d failed with %v, want an error wrapping fs.ErrExist", what, i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: all %d failed, want exactly one success", what, n)
	}
	return winner
}

// TestS3ConditionalPublish publishes _metadata the way fsstorage does (temporary object,
// then RenameNoReplace) from 8 goroutines at once: exactly one wins, its bytes are the
// ones published, and a later publish fails.
func TestS3ConditionalPublish(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	dir := "/" + bucket + "/job/chk-7"
	final := dir + "/_metadata"
	content := func(i int) []byte { return []byte(fmt.Sprintf("metadata of publisher %d", i)) }
	for i := range 8 {
		mustWrite(t, s, fmt.Sprintf("%s/_metadata.inprogress-%d", dir, i), content(i))
	}
	winner := race(t, "8 publishers of "+final, 8, func(i int) error {
		return s.RenameNoReplace(fmt.Sprintf("%s/_metadata.inprogress-%d", dir, i), final)
	})
	checkContent(t, s, final, content(winner))
	_, err := s.Stat(fmt.Sprintf("%s/_metadata.inprogress-%d", dir, winner))
	checkNotExist(t, "winner's temporary object after the rename", err)

	mustWrite(t, s, dir+"/_metadata.inprogress-late", []byte("late"))
	err = s.RenameNoReplace(dir+"/_metadata.inprogress-late", final)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "s3://"+bucket+"/job/chk-7/_metadata") {
		t.Errorf("second publish: %v, want an error wrapping fs.ErrExist naming the object", err)
	}
	checkContent(t, s, final, content(winner))
}

// TestS3ConditionalCreate races writers of the same key, 8 in one PUT each and 4 with
// multipart uploads: exactly one object is published and the losers leave no upload behind.
func TestS3ConditionalCreate(t *testing.T) {
	s, bucket := newTestS3(t, sdk.Options{OptionS3PartSize: "5mb"})
	for _, tc := range []struct{ size, writers int }{{1000, 8}, {6 << 20, 4}} {
		size := tc.size
		name := fmt.Sprintf("/%s/race-%d", bucket, size)
		winner := race(t, fmt.Sprintf("%d writers of %d bytes", tc.writers, size), tc.writers, func(i int) error {
			return writeFile(s, name, testData(size, byte(i)), 1<<20)
		})
		checkContent(t, s, name, testData(size, byte(winner)))
	}
	res, err := s.core.ListMultipartUploads(t.Context(), bucket, "", "", "", "", 100)
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	if len(res.Uploads) != 0 {
		t.Errorf("losing writers left %d unfinished multipart uploads", len(res.Uploads))
	}
}

// TestS3Mkdir checks that Mkdir creates a directory once and then fails with fs.ErrExist,
// also for a prefix that only has objects below it. (Racing Mkdirs are exclusive only
// where the server honours If-None-Match on keys ending in "/": AWS does, SeaweedFS lets
// them all succeed, so the race is not asserted here.)
func TestS3Mkdir(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	dir := "/" + bucket + "/savepoints/savepoint-abc123-0123456789ab"
	if err := s.Mkdir(dir); err != nil {
		t.Fatalf("Mkdir(%s): %v", dir, err)
	}
	info, err := s.Stat(dir)
	if err != nil || !info.IsDir {
		t.Fatalf("Stat(%s) = %+v, %v; want a directory", dir, info, err)
	}
	if err := s.Mkdir(dir); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), S3URI(dir)) {
		t.Errorf("second Mkdir: %v, want fs.ErrExist naming %s", err, S3URI(dir))
	}
	mustWrite(t, s, "/"+bucket+"/savepoints/implied/f", []byte("x"))
	if err := s.Mkdir("/" + bucket + "/savepoints/implied"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir of a prefix with objects below it: %v, want fs.ErrExist", err)
	}
}

package fsys

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"syscall"
	"testing"
)

// TestS3Listing builds a job directory the way fsstorage does and lists it.
func TestS3Listing(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	job := "/" + bucket + "/ckpts/job-1"
	for _, d := range []string{"shared", "taskowned", "chk-2"} {
		if err := s.MkdirAll(job + "/" + d); err != nil {
			t.Fatalf("MkdirAll(%s): %v", d, err)
		}
	}
	mustWrite(t, s, job+"/chk-1/_metadata", []byte("m1"))
	mustWrite(t, s, job+"/chk-1/0a1b", []byte("state"))
	mustWrite(t, s, job+"/chk-10/_metadata", []byte("m10"))
	mustWrite(t, s, job+"/shared/f1", []byte("s"))
	mustWrite(t, s, job+"/notes", []byte("n"))

	got, err := s.List(job)
	if err != nil {
		t.Fatalf("List(%s): %v", job, err)
	}
	want := []DirEntry{
		{Name: "chk-1", IsDir: true}, {Name: "chk-10", IsDir: true}, {Name: "chk-2", IsDir: true},
		{Name: "notes"}, {Name: "shared", IsDir: true}, {Name: "taskowned", IsDir: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List(job) = %+v\nwant %+v", got, want)
	}
	got, err = s.List(job + "/chk-1")
	if want := []DirEntry{{Name: "0a1b"}, {Name: "_metadata"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("List(chk-1) = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.List(job + "/chk-2"); err != nil || len(got) != 0 {
		t.Errorf("List of the empty directory chk-2 = %+v, %v; want no entries and no error", got, err)
	}
	_, err = s.List(job + "/chk-3")
	checkNotExist(t, "List of a missing directory", err)

	for name, wantDir := range map[string]bool{job: true, job + "/chk-2": true, job + "/chk-1": true, job + "/notes": false} {
		info, err := s.Stat(name)
		if err != nil || info.IsDir != wantDir || info.IsRegular == wantDir {
			t.Errorf("Stat(%s) = %+v, %v; want IsDir=%v", name, info, err, wantDir)
		}
	}
	if info, err := s.Stat("/" + bucket); err != nil || !info.IsDir {
		t.Errorf("Stat of the bucket root = %+v, %v; want a directory", info, err)
	}
}

// TestS3ListingPages lists and deletes a directory of more than one page (1000 keys).
func TestS3ListingPages(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	dir := "/" + bucket + "/job/shared"
	const n = 1003
	var wg sync.WaitGroup
	errs := make(chan error, n)
	names := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				if err := s.putNoReplace(bucket, fmt.Sprintf("job/shared/f%04d", i), []byte{byte(i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		names <- i
	}
	close(names)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("put: %v", err)
	}
	got, err := s.List(dir)
	if err != nil || len(got) != n || got[0].Name != "f0000" || got[n-1].Name != fmt.Sprintf("f%04d", n-1) {
		t.Fatalf("List of %d objects: %d entries, %v", n, len(got), err)
	}
	if err := s.RemoveAll(dir); err != nil {
		t.Fatalf("RemoveAll of %d objects: %v", n, err)
	}
	_, err = s.List(dir)
	checkNotExist(t, "List after RemoveAll", err)
}

// TestS3RemoveAll deletes a whole checkpoint by prefix and nothing else, not even a
// sibling whose name starts the same.
func TestS3RemoveAll(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	job := "/" + bucket + "/job"
	if err := s.MkdirAll(job + "/chk-5"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"chk-5/_metadata", "chk-5/a", "chk-5/sub/b", "chk-50/_metadata", "chk-5x"} {
		mustWrite(t, s, job+"/"+f, []byte(f))
	}
	if err := s.RemoveAll(job + "/chk-5"); err != nil {
		t.Fatalf("RemoveAll(chk-5): %v", err)
	}
	_, err := s.Stat(job + "/chk-5")
	checkNotExist(t, "Stat of a removed checkpoint", err)
	checkContent(t, s, job+"/chk-50/_metadata", []byte("chk-50/_metadata"))
	checkContent(t, s, job+"/chk-5x", []byte("chk-5x"))

	// Remove: a file, an empty directory (its marker), not a full one.
	if err := s.MkdirAll(job + "/empty"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(job + "/empty"); err != nil {
		t.Errorf("Remove of an empty directory: %v", err)
	}
	_, err = s.Stat(job + "/empty")
	checkNotExist(t, "Stat of a removed empty directory", err)
	if err := s.Remove(job + "/chk-50"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("Remove of a full directory: %v, want ENOTEMPTY", err)
	}
	if err := s.Remove(job + "/chk-50/_metadata"); err != nil {
		t.Errorf("Remove of a file: %v", err)
	}
	_, err = s.Stat(job + "/chk-50")
	checkNotExist(t, "Stat of a directory whose last object was removed", err)
	if err := s.RemoveAll("/" + bucket); err == nil {
		t.Errorf("RemoveAll of a bucket root succeeded, want a refusal")
	}
}

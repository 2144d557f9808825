package fsys

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/minio/minio-go/v7"
)

// TestS3RoundTrip writes files of several sizes and reads them back, as streams.
func TestS3RoundTrip(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	before := time.Now().Add(-time.Minute)
	for _, n := range []int{0, 1, 100, 64 << 10, 3<<20 + 7} {
		name := "/" + bucket + "/job/chk-1/" + strings.Repeat("x", 1+n%7) + "-" + time.Now().Format("150405.000000")
		data := testData(n, byte(n))
		mustWrite(t, s, name, data)
		checkContent(t, s, name, data)
		info, err := s.Stat(name)
		if err != nil {
			t.Fatalf("Stat(%s): %v", name, err)
		}
		if !info.IsRegular || info.IsDir || info.Size != int64(n) {
			t.Errorf("Stat(%s) = %+v, want a regular file of %d bytes", name, info, n)
		}
		if info.ModTime.Before(before) || info.ModTime.After(time.Now().Add(time.Minute)) {
			t.Errorf("Stat(%s).ModTime = %v, want about now", name, info.ModTime)
		}
	}
}

// TestS3NothingVisibleBeforeSync checks that an object appears only at Sync, that Close
// without Sync leaves neither an object nor an unfinished multipart upload, and that a
// published file takes no more writes.
func TestS3NothingVisibleBeforeSync(t *testing.T) {
	s, bucket := newTestS3(t, sdk.Options{OptionS3PartSize: "5mb"})
	for _, n := range []int{10, 11 << 20} { // one PUT; a multipart upload with two parts sent
		name := "/" + bucket + "/unsynced-" + time.Now().Format("150405.000000")
		f, err := s.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(testData(n, 1)); err != nil {
			t.Fatalf("write %d bytes: %v", n, err)
		}
		_, err = s.Stat(name)
		checkNotExist(t, "Stat before Sync", err)
		if err := f.Close(); err != nil {
			t.Fatalf("Close without Sync: %v", err)
		}
		_, err = s.Stat(name)
		checkNotExist(t, "Stat after Close without Sync", err)
		res, err := s.core.ListMultipartUploads(context.Background(), bucket, "", "", "", "", 100)
		if err != nil {
			t.Fatalf("list multipart uploads: %v", err)
		}
		if len(res.Uploads) != 0 {
			t.Errorf("%d-byte file closed without Sync left %d unfinished uploads", n, len(res.Uploads))
		}
	}

	name := "/" + bucket + "/published"
	f, err := s.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write([]byte("abc"))
	if err := f.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Errorf("second Sync: %v, want nil", err)
	}
	if _, err := f.Write([]byte("more")); err == nil || !strings.Contains(err.Error(), "s3://"+bucket+"/published") {
		t.Errorf("Write after Sync: %v, want an error naming the object", err)
	}
	checkContent(t, s, name, []byte("abc"))
}

// TestS3Multipart20MiB streams 20 MiB (and a few bytes) through a 5 MiB part size: the
// object is a multipart one, reads back equal, and the writer's memory stays bounded by
// two parts.
func TestS3Multipart20MiB(t *testing.T) {
	const partSize = 5 << 20
	s, bucket := newTestS3(t, sdk.Options{OptionS3PartSize: "5mb"})
	name := "/" + bucket + "/job/shared/big"
	data := testData(20<<20+12345, 7)

	peak := sampleHeap(t)
	start := time.Now()
	if err := writeFile(s, name, data, 200<<10); err != nil {
		t.Fatalf("write 20 MiB: %v", err)
	}
	elapsed := time.Since(start)
	grown := peak()
	t.Logf("20 MiB in %d-byte parts: %v (%.1f MB/s), heap grew by at most %.1f MiB while writing",
		partSize, elapsed, float64(len(data))/elapsed.Seconds()/1e6, float64(grown)/(1<<20))
	// Two part buffers, the garbage of the first one's growth and the client's overhead
	// (13.2 MiB measured); buffering the 20 MiB stream whole would exceed this.
	if limit := uint64(7 * partSize / 2); grown > limit {
		t.Errorf("writing 20 MiB grew the heap by %d bytes, want at most %d (two parts and overhead)", grown, limit)
	}

	info, err := s.core.StatObject(context.Background(), bucket, "job/shared/big", minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if !strings.HasSuffix(strings.Trim(info.ETag, `"`), "-5") {
		t.Errorf("ETag %s: want a multipart ETag of 5 parts (suffix -5)", info.ETag)
	}
	r, err := s.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if want := sha256.Sum256(data); n != int64(len(data)) || string(h.Sum(nil)) != string(want[:]) {
		t.Errorf("read back %d bytes with a different digest, want %d equal bytes", n, len(data))
	}
}

// TestS3Errors checks that errors name the bucket and key and keep the io/fs kind.
func TestS3Errors(t *testing.T) {
	s, bucket := newTestS3(t, nil)
	missing := "/" + bucket + "/no/such/key"
	uri := "s3://" + bucket + "/no/such/key"
	_, err := s.Open(missing)
	checkNotExist(t, "Open of a missing key", err)
	if !strings.Contains(err.Error(), uri) {
		t.Errorf("Open error %q does not name %s", err, uri)
	}
	_, err = s.Stat(missing)
	checkNotExist(t, "Stat of a missing key", err)
	if !strings.Contains(err.Error(), uri) {
		t.Errorf("Stat error %q does not name %s", err, uri)
	}
	err = s.Remove(missing)
	checkNotExist(t, "Remove of a missing key", err)
	if err := s.RemoveAll(missing); err != nil {
		t.Errorf("RemoveAll of a missing key: %v, want nil", err)
	}

	nb := "/no-such-bucket-" + randomSuffix(t) + "/k"
	err = writeFile(s, nb, []byte("x"), 1)
	if err == nil || !strings.Contains(err.Error(), "s3://"+strings.TrimPrefix(nb, "/")) {
		t.Errorf("write to a missing bucket: %v, want an error naming %s", err, S3URI(nb))
	}
	checkNotExist(t, "write to a missing bucket", err)
	_, err = s.Stat("/" + strings.Split(nb, "/")[1])
	checkNotExist(t, "Stat of a missing bucket", err)

	for _, bad := range []string{"relative/key", "/", "/Bad_Bucket/k", "/b/../k"} {
		if _, err := s.Create(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Create(%q): %v, want an error naming it", bad, err)
		}
	}

	wrong := s3TestOptions(t)
	wrong[OptionS3SecretKey] = "not-the-secret"
	cfg, err := S3ConfigFromOptions(wrong, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	bad, err := NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Stat("/" + bucket + "/k")
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "s3://"+bucket+"/k") {
		t.Errorf("Stat with a wrong secret: %v, want an error wrapping fs.ErrPermission naming the object", err)
	}
}

// sampleHeap samples the live heap every few milliseconds until the returned function is
// called, which returns the largest growth over the heap at the start.
func sampleHeap(t *testing.T) func() uint64 {
	t.Helper()
	read := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// Collect often, so that the heap follows live memory rather than garbage.
	old := debug.SetGCPercent(5)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	runtime.GC()
	base := read()
	var maxSeen uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if h := read(); h > maxSeen {
				maxSeen = h
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		if maxSeen < base {
			return 0
		}
		return maxSeen - base
	}
}

// TestS3TransportTrustsTheSystemRoots: with TLS the client verifies servers against the
// system's root certificates, which crypto/x509 loads itself (SSL_CERT_FILE and
// SSL_CERT_DIR included), and speaks TLS 1.2 at least; without TLS it has no TLS settings.
func TestS3TransportTrustsTheSystemRoots(t *testing.T) {
	tr, err := s3Transport(true)
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.TLSClientConfig; c == nil || c.RootCAs != nil || c.MinVersion != tls.VersionTLS12 {
		t.Fatalf("TLS config %+v: want the system roots (RootCAs nil) and TLS 1.2 at least", c)
	}
	if !tr.DisableCompression || tr.Proxy == nil {
		t.Fatalf("transport lost minio's defaults: DisableCompression %v, proxy set %v", tr.DisableCompression, tr.Proxy != nil)
	}
	if tr, err = s3Transport(false); err != nil || tr.TLSClientConfig != nil {
		t.Fatalf("plain transport: TLS config %+v, error %v; want none", tr.TLSClientConfig, err)
	}
}

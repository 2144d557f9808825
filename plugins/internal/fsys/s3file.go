package fsys

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
)

// s3File is an object being written. Bytes collect in a part buffer; full parts go up as a
// multipart upload, one part in flight while the next fills, so a file holds at most two
// parts in memory. Sync publishes the object, with If-None-Match: * so that it never
// replaces an existing one: as one PUT when everything fits in one part, else by
// completing the multipart upload. Nothing is visible before Sync; Close without Sync
// aborts the upload. An s3File is not safe for concurrent use.
type s3File struct {
	fs          *S3
	bucket, key string
	buf         []byte
	// spare is the buffer of the last part uploaded, reused for the next one.
	spare    []byte
	uploadID string
	parts    []minio.CompletePart
	// pending receives the result of the part in flight; nil when none is.
	pending chan partResult
	// err is the first failure; the file is dead after it.
	err       error
	published bool
	closed    bool
}

var _ File = (*s3File)(nil)

// partResult is the outcome of uploading one part.
type partResult struct {
	part minio.CompletePart
	buf  []byte
	err  error
}

// Write implements io.Writer. It blocks while a full part waits for the previous one to
// finish uploading.
func (f *s3File) Write(p []byte) (int, error) {
	switch {
	case f.closed:
		return 0, s3Errorf("write", f.bucket, f.key, fs.ErrClosed, "file already closed")
	case f.err != nil:
		return 0, f.err
	case f.published:
		return 0, s3Errorf("write", f.bucket, f.key, fs.ErrInvalid, "write after Sync: the object is already published and S3 objects are immutable")
	}
	n := 0
	for len(p) > 0 {
		chunk := p[:min(f.fs.partSize-len(f.buf), len(p))]
		f.buf = appendCapped(f.buf, chunk, f.fs.partSize)
		p = p[len(chunk):]
		n += len(chunk)
		if len(f.buf) == f.fs.partSize {
			if err := f.sendPart(); err != nil {
				return n, f.fail(err)
			}
		}
	}
	return n, nil
}

// appendCapped appends chunk to buf, growing it geometrically but never beyond limit
// bytes of capacity.
func appendCapped(buf, chunk []byte, limit int) []byte {
	need := len(buf) + len(chunk)
	if need > cap(buf) {
		newCap := min(max(2*cap(buf), need, 64<<10), limit)
		grown := make([]byte, len(buf), newCap)
		copy(grown, buf)
		buf = grown
	}
	return append(buf, chunk...)
}

// sendPart starts uploading the buffer as the next part, after the previous part is done.
func (f *s3File) sendPart() error {
	ctx := context.Background()
	if f.uploadID == "" {
		id, err := f.fs.core.NewMultipartUpload(ctx, f.bucket, f.key, minio.PutObjectOptions{})
		if err != nil {
			return s3Err("start multipart upload", f.bucket, f.key, err)
		}
		f.uploadID = id
	}
	if err := f.wait(); err != nil {
		return err
	}
	num := len(f.parts) + 1
	if num > maxS3Parts {
		return s3Errorf("upload part", f.bucket, f.key, nil,
			"more than %d parts of %d bytes: raise the %s option", maxS3Parts, f.fs.partSize, OptionS3PartSize)
	}
	buf := f.buf
	f.buf, f.spare = f.spare[:0], nil
	if f.buf == nil {
		// The file is a big one: give the second buffer its full size at once.
		f.buf = make([]byte, 0, f.fs.partSize)
	}
	ch := make(chan partResult, 1)
	f.pending = ch
	core, bucket, key, id := f.fs.core, f.bucket, f.key, f.uploadID
	go func() {
		p, err := core.PutObjectPart(ctx, bucket, key, id, num, bytes.NewReader(buf), int64(len(buf)), minio.PutObjectPartOptions{})
		if err != nil {
			err = s3Err("upload part "+strconv.Itoa(num), bucket, key, err)
		}
		ch <- partResult{part: minio.CompletePart{PartNumber: num, ETag: p.ETag}, buf: buf, err: err}
	}()
	return nil
}

// wait waits for the part in flight, if any, and records it.
func (f *s3File) wait() error {
	if f.pending == nil {
		return nil
	}
	r := <-f.pending
	f.pending = nil
	f.spare = r.buf
	if r.err != nil {
		return r.err
	}
	f.parts = append(f.parts, r.part)
	return nil
}

// Sync implements File: it publishes the object under its key unless an object already
// exists there, in which case the error wraps fs.ErrExist. After Sync the file takes no
// more writes; a second Sync does nothing.
func (f *s3File) Sync() error {
	switch {
	case f.closed:
		return s3Errorf("sync", f.bucket, f.key, fs.ErrClosed, "file already closed")
	case f.err != nil:
		return f.err
	case f.published:
		return nil
	}
	var err error
	if f.uploadID == "" {
		err = f.fs.putNoReplace(f.bucket, f.key, f.buf)
	} else {
		err = f.complete()
	}
	if err != nil {
		return f.fail(err)
	}
	f.published = true
	f.buf, f.spare, f.parts = nil, nil, nil
	return nil
}

// complete uploads the last part and completes the multipart upload if no object exists
// under the key.
func (f *s3File) complete() error {
	if len(f.buf) > 0 {
		if err := f.sendPart(); err != nil {
			return err
		}
	}
	if err := f.wait(); err != nil {
		return err
	}
	var opts minio.PutObjectOptions
	opts.SetMatchETagExcept("*")
	return retryConflict(func() error {
		_, err := f.fs.core.CompleteMultipartUpload(context.Background(), f.bucket, f.key, f.uploadID, f.parts, opts)
		if err != nil {
			return s3Err("complete multipart upload (If-None-Match: *)", f.bucket, f.key, err)
		}
		return nil
	})
}

// retryConflict runs op again, a few times with a short pause, while it fails with AWS's
// 409 ConditionalRequestConflict (another conditional write of the key was in progress).
func retryConflict(op func() error) error {
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt == 4 || !isConditionalConflict(err) {
			return err
		}
		time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
	}
}

// fail records err, aborts the upload and frees the buffers. It returns err.
func (f *s3File) fail(err error) error {
	f.err = err
	f.abort()
	return err
}

// abort waits for the part in flight, aborts the multipart upload if one was started
// and not completed, and frees the buffers.
func (f *s3File) abort() error {
	f.wait()
	f.buf, f.spare, f.parts = nil, nil, nil
	if f.uploadID == "" || f.published {
		return nil
	}
	id := f.uploadID
	f.uploadID = ""
	if err := f.fs.core.AbortMultipartUpload(context.Background(), f.bucket, f.key, id); err != nil {
		return s3Err(fmt.Sprintf("abort multipart upload %s", id), f.bucket, f.key, err)
	}
	return nil
}

// Close implements File. Without Sync, nothing was published: the upload is aborted and
// the bytes written are gone.
func (f *s3File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.abort()
}

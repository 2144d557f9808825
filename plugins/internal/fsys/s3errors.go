package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"syscall"

	"github.com/minio/minio-go/v7"
)

// s3Error is a failed S3 operation. Its message names the operation and the object's
// s3:// URI (bucket and key); it wraps the io/fs sentinel the failure amounts to, if any,
// and the client's error.
type s3Error struct {
	op    string
	uri   string
	kind  error
	cause error
}

// Error implements error: "s3 <op> s3://bucket/key: <cause>".
func (e *s3Error) Error() string {
	return "s3 " + e.op + " " + e.uri + ": " + describeS3(e.cause)
}

// Unwrap returns the sentinel (fs.ErrNotExist, fs.ErrExist, fs.ErrPermission) when there is
// one, and the cause.
func (e *s3Error) Unwrap() []error {
	if e.kind == nil {
		return []error{e.cause}
	}
	return []error{e.kind, e.cause}
}

// s3Err wraps err, a failure of op on the object bucket/key, classifying S3 error codes.
func s3Err(op, bucket, key string, err error) error {
	return &s3Error{op: op, uri: objectURI(bucket, key), kind: s3Kind(err), cause: err}
}

// s3Errorf returns an error of op on bucket/key with a message of its own and the given
// sentinel kind.
func s3Errorf(op, bucket, key string, kind error, format string, args ...any) error {
	return &s3Error{op: op, uri: objectURI(bucket, key), kind: kind, cause: fmt.Errorf(format, args...)}
}

// s3Kind maps an S3 error response to an io/fs sentinel, or nil.
func s3Kind(err error) error {
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) {
		return nil
	}
	switch resp.Code {
	case "NoSuchKey", "NoSuchBucket", "NotFound", "NoSuchUpload":
		return fs.ErrNotExist
	case "PreconditionFailed":
		return fs.ErrExist
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled", "ExpiredToken", "InvalidToken":
		return fs.ErrPermission
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return fs.ErrNotExist
	case http.StatusPreconditionFailed:
		return fs.ErrExist
	case http.StatusForbidden, http.StatusUnauthorized:
		return fs.ErrPermission
	}
	return nil
}

// isConditionalConflict reports AWS's 409 ConditionalRequestConflict: a conditional write
// raced with another write of the same key and should be retried.
func isConditionalConflict(err error) bool {
	var resp minio.ErrorResponse
	return errors.As(err, &resp) && (resp.Code == "ConditionalRequestConflict" ||
		(resp.StatusCode == http.StatusConflict && resp.Code == "OperationAborted"))
}

// describeS3 renders the client's error with the S3 error code and HTTP status, which
// minio-go's own message leaves out.
func describeS3(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code != "" || resp.StatusCode != 0) {
		msg := resp.Message
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return fmt.Sprintf("%s (%s, HTTP %d)", msg, resp.Code, resp.StatusCode)
	}
	return err.Error()
}

// errNotEmpty is the cause of removing a directory that still has entries.
var errNotEmpty = syscall.ENOTEMPTY

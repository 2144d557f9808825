package fsys

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3 names. The S3 file system names objects like absolute slash paths whose first element
// is the bucket: "/bucket/prefix/job/chk-1/_metadata" is the object with key
// "prefix/job/chk-1/_metadata" in bucket "bucket". Path functions (path/filepath Join, Dir,
// Base, Rel) therefore work on S3 names as on local paths. S3Name and S3URI convert between
// names and s3:// URIs.

// IsS3URI reports whether s is a URI of one of the S3 schemes: s3, s3a, s3n or s3p
// (Flink's spellings), in any case.
func IsS3URI(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n", "s3p":
		return true
	}
	return false
}

// S3Name returns the S3 file system's name of an s3://bucket/key URI: "/bucket/key",
// cleaned, without a trailing slash. The bucket must be a valid S3 bucket name; the key
// must not contain "." or ".." elements, a query or a fragment. "s3://bucket" and
// "s3://bucket/" name the bucket's root, "/bucket".
func S3Name(uri string) (string, error) {
	if !IsS3URI(uri) {
		return "", fmt.Errorf("%q is not an s3:// URI: %w", uri, fs.ErrInvalid)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("malformed S3 URI %q: %w: %w", uri, fs.ErrInvalid, err)
	}
	switch {
	case u.User != nil:
		return "", fmt.Errorf("S3 URI %q: credentials do not belong in the URI (use the s3.access-key and s3.secret-key options or AWS_ACCESS_KEY_ID): %w", uri, fs.ErrInvalid)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("S3 URI %q: a query or fragment is not allowed: %w", uri, fs.ErrInvalid)
	case u.Port() != "":
		return "", fmt.Errorf("S3 URI %q: the part after s3:// is the bucket, not a host: set the endpoint with the s3.endpoint option or AWS_ENDPOINT_URL: %w", uri, fs.ErrInvalid)
	}
	if err := s3utils.CheckValidBucketNameStrict(u.Host); err != nil {
		return "", fmt.Errorf("S3 URI %q: bucket %q: %w: %w", uri, u.Host, fs.ErrInvalid, err)
	}
	key := strings.Trim(u.Path, "/")
	if key != "" {
		for _, elem := range strings.Split(key, "/") {
			if elem == "" || elem == "." || elem == ".." {
				return "", fmt.Errorf("S3 URI %q: key %q has an empty, \".\" or \"..\" element: %w", uri, key, fs.ErrInvalid)
			}
		}
		return "/" + u.Host + "/" + key, nil
	}
	return "/" + u.Host, nil
}

// S3URI returns the s3:// URI of an S3 name ("/bucket/key" becomes "s3://bucket/key").
func S3URI(name string) string {
	return "s3://" + strings.TrimPrefix(name, "/")
}

// splitName returns the bucket and key of an S3 name; the key is "" for a bucket's root.
func splitName(name string) (bucket, key string, err error) {
	if !strings.HasPrefix(name, "/") || path.Clean(name) != name || name == "/" {
		return "", "", &fs.PathError{Op: "s3", Path: name, Err: fmt.Errorf("not an S3 name of the form /bucket/key: %w", fs.ErrInvalid)}
	}
	bucket, key, _ = strings.Cut(name[1:], "/")
	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return "", "", &fs.PathError{Op: "s3", Path: name, Err: fmt.Errorf("bucket %q: %w: %w", bucket, fs.ErrInvalid, err)}
	}
	return bucket, key, nil
}

// dirPrefix is the key prefix of the objects below directory key: "" for the bucket's
// root, key+"/" otherwise. It is also the key of the directory's marker object.
func dirPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + "/"
}

// objectURI is the s3:// URI of an object, for messages.
func objectURI(bucket, key string) string {
	if key == "" {
		return "s3://" + bucket
	}
	return "s3://" + bucket + "/" + key
}

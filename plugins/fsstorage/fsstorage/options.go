package fsstorage

import (
	"github.com/flowstate/flowstate/plugins/internal/fsys"
	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// Option keys fsstorage accepts besides the common sdk.OptionCheckpointDir,
// sdk.OptionSavepointDir and sdk.OptionDataInlineThreshold.
const (
	// OptionWriteBufferSize is the size of the buffer state streams collect small writes
	// in before writing them to their file (a human size such as "64kb"; default
	// dirstorage.DefaultWriteBufferSize).
	OptionWriteBufferSize = dirstorage.OptionWriteBufferSize
	// OptionS3Endpoint is the S3 endpoint (see package plugins/internal/fsys for the s3.* options).
	OptionS3Endpoint = fsys.OptionS3Endpoint
	// OptionS3AccessKey is the S3 access key id.
	OptionS3AccessKey = fsys.OptionS3AccessKey
	// OptionS3SecretKey is the S3 secret access key.
	OptionS3SecretKey = fsys.OptionS3SecretKey
	// OptionS3PathStyle selects path-style S3 requests ("true" or "false").
	OptionS3PathStyle = fsys.OptionS3PathStyle
)

// OptionKeys returns every option Configure accepts.
func OptionKeys() []string {
	return append(dirstorage.OptionKeys(), fsys.S3OptionKeys()...)
}

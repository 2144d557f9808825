// Package fsys holds the file systems the built-in plugins write through besides the local
// disk (sdk/dirstorage.Local): S3, and Mux, which routes s3:// names to S3 and the rest to
// the local disk, with the s3.* options that configure S3 (S3OptionKeys,
// S3ConfigFromOptions). It is shared by two plugins, so both speak to S3 with one client and
// one set of option keys: fsstorage (a dirstorage.Storage over a Mux) and disaggregated
// (whose s3:// remote store of table files is an S3).
//
// Names are the store's own paths. Errors keep the identity of io/fs errors
// (fs.ErrNotExist, fs.ErrExist) so that callers can tell a missing file from a failure.
//
// It is the one package that links minio-go, which is why the runner binary must never
// reach it (internal/deps checks it). It imports only the SDK (sdk, sdk/bytesize,
// sdk/dirstorage): never the runtime, a plugin, or the SDK's plugin or host end.
package fsys

import "github.com/flowstate/flowstate/sdk/dirstorage"

// The file system's types are sdk/dirstorage's: fsstorage is a dirstorage.Storage over a
// Mux of dirstorage.Local and S3.
type (
	// FS is dirstorage.FS.
	FS = dirstorage.FS
	// File is dirstorage.File.
	File = dirstorage.File
	// FileInfo is dirstorage.FileInfo.
	FileInfo = dirstorage.FileInfo
	// DirEntry is dirstorage.DirEntry.
	DirEntry = dirstorage.DirEntry
	// LeaseFS is dirstorage.LeaseFS.
	LeaseFS = dirstorage.LeaseFS
)

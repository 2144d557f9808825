// Package fsstorage is Flowstate's file-system checkpoint storage, the counterpart of Flink's
// FileSystemCheckpointStorage: checkpoints are written below a checkpoint directory on the
// local disk (a path or a file:// URI) or on S3 (s3://bucket/prefix), one directory per
// job:
//
//	<dir>/<job-id>/shared/        state streams of scope SHARED (incremental checkpoints)
//	<dir>/<job-id>/taskowned/     state owned by tasks (created, reserved)
//	<dir>/<job-id>/chk-N/         exclusive state files of checkpoint N (random names)
//	<dir>/<job-id>/chk-N/_metadata
//	<dir>/<job-id>/_lease         the job's lease record (sdk.LeaseStore)
//
// The storage is sdk/dirstorage over a file system that routes local paths to the local
// disk and s3:// URIs to S3: dirstorage gives the layout, atomic publication of _metadata
// (a checkpoint exists only once _metadata is whole; nothing is replaced), inline state
// below the data inline threshold (default 20 KiB), leftover cleanup, shared-state listing
// and the path checks. Savepoints go to <target or savepoint-dir>/savepoint-<first 6 chars
// of the job id>-<12 random hex>/ and are self-contained.
//
// The lease record is replaced only by compare-and-swap: on a local file system with
// sdk/filelease (link(2) to create it, flock(2) and rename(2) to replace it), on S3 with
// conditional PUTs (If-None-Match: * to create it, If-Match on its ETag to replace it).
// State files on the local disk are local files for the backends' restores
// (sdk.LocalStateLocator).
//
// External pointers are the chk-N or savepoint directories: absolute local paths, or
// s3:// URIs; handle refs are file:// or s3:// URIs.
//
// As every plugin it imports only the SDK (sdk, sdk/dirstorage) and the file systems the
// plugins share (plugins/internal/fsys), never the runtime, another plugin, or the SDK's
// plugin or host end (sdk/server, sdk/host); its main package links sdk/server.
package fsstorage

import (
	"context"
	"os"

	"github.com/flowstate/flowstate/plugins/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// Name is the plugin's name as users write it in the configuration.
const Name = "fsstorage"

// Version is the plugin's version.
const Version = "0.1.0"

// Storage is the file-system checkpoint storage. Configure it once, then use it from any
// number of goroutines.
type Storage struct {
	*dirstorage.Storage
}

var _ sdk.CheckpointStorage = (*Storage)(nil)

// New returns a Storage with the default options and no checkpoint directory.
func New() *Storage {
	fs := fsys.Mux{Local: dirstorage.Local{}}
	cfg, _ := dirstorage.ParseOptions(fs, nil)
	return &Storage{dirstorage.New(fs, withIdentity(cfg))}
}

// withIdentity completes a configuration with what fsstorage always is.
func withIdentity(cfg dirstorage.Config) dirstorage.Config {
	cfg.Name, cfg.HighlyAvailable = Name, true
	return cfg
}

// PluginInfo implements sdk.Plugin.
func (s *Storage) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: Name, Version: Version}
}

// Configure implements sdk.Plugin. It accepts the options OptionKeys lists: "dir" and
// "savepoint-dir" (paths, file:// or s3:// URIs), "data-inline-threshold" (a human size,
// at most 1 MiB), "write-buffer-size" and the s3.* options; any other option is an
// *sdk.OptionError.
func (s *Storage) Configure(_ context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return err
	}
	cfg, err := dirstorage.ParseOptions(fsys.Mux{}, opts)
	if err != nil {
		return err
	}
	s3cfg, err := fsys.S3ConfigFromOptions(opts, os.Getenv)
	if err != nil {
		return err
	}
	s3, err := fsys.NewS3(s3cfg)
	if err != nil {
		return &sdk.OptionError{Option: OptionS3Endpoint, Value: opts[OptionS3Endpoint], Err: err}
	}
	s.Storage = dirstorage.New(fsys.Mux{Local: dirstorage.Local{}, S3: s3}, withIdentity(cfg))
	return nil
}

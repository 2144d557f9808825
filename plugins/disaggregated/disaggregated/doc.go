// Package disaggregated is the disaggregated state backend: each keyed backend keeps its
// state in an embedded LSM store (github.com/syndtr/goleveldb) whose table files live on a
// remote store (option remote: an S3 bucket, s3://bucket/prefix, or a file:// directory)
// and are read through a local cache whose size is bounded (option cache-size), so state
// may be much larger than the local disk, like Flink 2.0's ForSt. Only the journals and the
// manifest (a few MiB) stay in the local working directory. An s3:// remote goes through
// the S3 client fsstorage uses (plugins/internal/fsys), configured by the same s3.* options
// with the same AWS environment fallbacks; conditional PUTs (If-None-Match: *) create each
// table once.
//
// Table files are written once and never changed: goleveldb writes a table to the cache
// directory, and when it closes it the store uploads it under a name no other database
// uses (<job>/<operator>-<subtask>-<random>/<number>.ldb, created conditionally) and keeps
// the file as a cache entry. Reads open tables through the cache, which downloads a table
// it lacks whole, checks its size and CRC-32C against what the writer recorded, and evicts
// the least recently used tables no reader holds open.
//
// # Checkpoints reference tables in place
//
// A checkpoint (FormatDisaggregated) copies no table: its synchronous part cuts the
// database at a record boundary of its manifest and journals, and its handle's one
// exclusive stream lists the remote tables of that version (names, sizes, checksums) with
// a copy of the manifest and of the journals, which hold the memtables (at most twice
// write-buffer-size). A restore of exactly the backend's key groups lays the copies out in
// a new working directory and opens the database in place: it downloads nothing up front,
// and reads go through the cache. Other restores (other key groups, several handles,
// canonical handles) read the state into a new database. Savepoints are canonical streams
// (sdk.FormatCanonical) that any backend restores.
//
// # Who owns a remote table
//
//   - A table this keyed backend created and no written snapshot lists is the live
//     database's: the backend deletes it when goleveldb drops it (after a compaction) or
//     when the keyed backend closes.
//   - A table a written snapshot lists is pinned by that checkpoint until the backend
//     learns its fate: aborted, the pin goes (and the table, if nothing else uses it);
//     completed, the checkpoint owns the table from then on and the live database only
//     uses it. The backend never deletes a table a completed checkpoint lists, even after
//     goleveldb dropped it: deleting it is the job of the runner's shared-state registry,
//     once no retained checkpoint lists it.
//   - A table restored from a checkpoint belongs to that checkpoint (claimed or not, a
//     restore never makes the live database its owner), so the backend never deletes it.
//     After a restore in NO_CLAIM mode the runner asks for a Full checkpoint, which copies
//     such tables to objects of the new backend's own (an object-store-side copy on S3), so
//     that the job's checkpoints stop depending on a checkpoint it does not own.
//
// In this version the registry does not yet know of remote tables (the optional SDK
// interface through which a checkpoint storage adopts them is the next step), so the tables
// of completed checkpoints stay on the remote store until removed by hand: nothing is ever
// deleted while a checkpoint may need it, at the price of space.
//
// It owns the remote store interface and its file:// and s3:// implementations, the cache,
// the goleveldb storage over both, and the backend's keyed backends, snapshots and
// restores. As every plugin it imports only the SDK (sdk, sdk/bytesize, sdk/kvstream),
// goleveldb and the code the plugins share (plugins/internal/fsys, hence minio-go), never
// the runtime, another plugin (not plugins/leveldb or fsstorage either), or the SDK's
// plugin or host end (sdk/server, sdk/host); its main package links sdk/server.
package disaggregated

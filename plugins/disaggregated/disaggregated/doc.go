// Package disaggregated is the disaggregated state backend: each keyed backend keeps its
// state in embedded LSM stores (github.com/syndtr/goleveldb) whose table files live on a
// remote store (option remote: an S3 bucket, s3://bucket/prefix, or a file:// directory)
// and are read through a local cache whose size is bounded (option cache-size), so state
// may be much larger than the local disk, like Flink 2.0's ForSt. Only the journals and the
// manifests (a few MiB) stay in the local working directory. An s3:// remote goes through
// the S3 client fsstorage uses (plugins/internal/fsys), configured by the same s3.* options
// with the same AWS environment fallbacks, each request tried 3 times; conditional PUTs
// (If-None-Match: *) create each table once.
//
// Table files are written once and never changed: goleveldb writes a table to the cache
// directory, and when it syncs it, whole, the store uploads it under a name no other
// database uses (<job>/<operator>-<subtask>-<random>/<number>.ldb, created conditionally)
// and keeps the file as a cache entry. Reads open tables through the cache, which downloads
// a table it lacks whole, checks its size and CRC-32C against what the writer recorded, and
// evicts the least recently used tables no reader holds open.
//
// # Checkpoints reference tables in place
//
// A checkpoint (FormatDisaggregated) copies no table the checkpoint storage can take over:
// its synchronous part cuts each database at a record boundary of its manifest and
// journals, and its handle holds a copy of the manifest and of the journals (the memtables,
// at most twice write-buffer-size) with the list of the tables of that version, and a
// shared file per table. The backend gets those files from the streams it writes to: when
// they take files over (sdk.RemoteFileAdopter; fsstorage's do for files on the medium of
// its checkpoint directory), each table is adopted where it is, once, and later checkpoints
// reference the same handle; otherwise the table's bytes are written to a shared stream,
// once, and later checkpoints reference the copy once the checkpoint that made it
// completed. Savepoints are canonical streams (sdk.FormatCanonical) that any backend
// restores.
//
// # Restores open the tables in place, at any parallelism
//
// Every FormatDisaggregated handle whose key groups meet the backend's is opened in place:
// its manifest and journals are laid out in a new directory and the database opens with its
// tables where they are, on whichever store the checkpoint names (a table the checkpoint
// holds as a copy is first written back to the backend's remote store). A keyed backend is
// a list of parts: one database per restored handle, for the key groups of that handle it
// owns, and an empty one for key groups no handle had. Get, Write, Scan and snapshots see
// each part only within its key groups, so a database restored from a subtask that owned
// more holds keys that are never read again (compactions carry them along). Nothing is
// downloaded before the first read, but for those copies. Every table must be on its store
// with its size, or the restore fails naming it.
//
// # Who owns a remote table
//
//   - A table this database created and no checkpoint references is the live database's:
//     the backend deletes it when goleveldb drops it (after a compaction) or when the keyed
//     backend closes.
//   - A table a written snapshot lists is pinned by that checkpoint until the backend
//     learns its fate. Aborted, the pin goes (and the table, if nothing else uses it); the
//     runner never discards an adopted table of a checkpoint that did not complete while
//     the attempt runs, and discards those no completed checkpoint took when it ends.
//   - A table a completed checkpoint references in place (adopted) is the checkpoint's from
//     then on: the backend never deletes it, even after goleveldb dropped it; the runner's
//     shared-state registry deletes it, one checkpoint after no retained checkpoint
//     references it. The live database reads only tables its newest checkpoint lists or
//     that it wrote since, so that never takes one it needs.
//   - A table the checkpoint storage holds a copy of stays the live database's, and is
//     deleted once it drops it.
//   - A table restored in place belongs to its checkpoint (claimed or not, a restore never
//     makes the live database its owner), so the backend never deletes it. After a restore
//     in NO_CLAIM mode the runner asks for a Full checkpoint, which copies such tables to
//     objects of the new database's own (reading each through the cache), so that the job's
//     checkpoints stop depending on a checkpoint it does not own; the registry never
//     deletes the restored checkpoint's tables.
//
// # Faults
//
// A fetch that fails for want of an answer from the store is no corruption to goleveldb
// (a missing or damaged table is): the read fails, a failed flush or compaction is tried
// again with goleveldb's backoff, and nothing sticks once the store answers. Batches larger
// than the write buffer go through the memtable (goleveldb's transaction path for them kept
// the write lock after a failed flush). A bucket that does not answer at Configure is a
// failure the restart strategy may outlast, not a refused option.
//
// It owns the remote store interface and its file:// and s3:// implementations, the cache,
// the goleveldb storage over both, and the backend's keyed backends, snapshots and
// restores. As every plugin it imports only the SDK (sdk, sdk/bytesize, sdk/kvstream),
// goleveldb and the code the plugins share (plugins/internal/fsys, hence minio-go), never
// the runtime, another plugin (not plugins/leveldb or fsstorage either), or the SDK's
// plugin or host end (sdk/server, sdk/host); its main package links sdk/server.
package disaggregated

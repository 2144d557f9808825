package wire

// Additions are what protocol version 1 gained after its first release. The plugin end
// announces each in an answer, and a host uses one only with a plugin that announced it:
// plugins built before an addition keep working with newer hosts, which serve a plugin
// announcing none the way the first SDK did (docs/plugin-authors.md, section 10).
// Request fields a plugin does not know (SnapshotRequest.full) it ignores.
type Additions struct {
	// Pipeline: the plugin serves the Pipeline stream (CreateKeyedBackendResponse.pipeline).
	Pipeline bool
	// ReadsAhead: the plugin keeps a keyed backend's calls one at a time itself, so that a
	// Get may come while Pipeline writes are in flight (CreateKeyedBackendResponse.reads_ahead).
	ReadsAhead bool
	// LocalReads: a restoring plugin can read a local state file itself (OpenRead.local_ok).
	LocalReads bool
	// LocalWrites: a snapshot in the plugin can write a local state file itself
	// (OpenStream.local_ok), and a storage plugin says which locations create such files
	// (LocationResponse.local_state_files).
	LocalWrites bool
	// AccessInterfaces: the plugin says which optional interfaces an access implements
	// (CreateAccessResponse.lists_shared_state, locates_local_state, stores_lease).
	AccessInterfaces bool
	// RemoteFiles: a storage plugin says which accesses take over remote files
	// (CreateAccessResponse.adopts_remote_files), and a snapshot in the plugin asks the
	// host's streams to, when the host offers it (SnapshotWriteStart.adopts_remote_files).
	RemoteFiles bool
}

// Current announces every addition: what plugins built with this SDK speak.
var Current = Additions{Pipeline: true, ReadsAhead: true, LocalReads: true, LocalWrites: true, AccessInterfaces: true, RemoteFiles: true}

// Announced is what the plugin end of this process announces: Current, unless the main
// function of one of the SDK's test plugins sets it, before server.Serve, to play a plugin
// built before some additions (memprev announces none: the previous protocol).
var Announced = Current

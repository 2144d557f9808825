// Package kvstream reads and writes the canonical snapshot format, sdk.FormatCanonical
// ("flowstate-kv-v1"): a self-contained stream of key/value pairs that every state backend
// can write and restore, so a job's state can move between backends.
//
// Layout of a stream:
//
//	magic    "flowstate-kv-v1\n" (16 bytes)
//	record*  uvarint(len(key)+1) uvarint(len(value)) key value
//	end      0x00 uvarint(record count) crc32c (4 bytes, little endian)
//
// The checksum is the CRC-32C (Castagnoli) of every byte before it, magic included. A
// record's key-length field is never 0, which is what tells a record from the end marker.
// Records appear in no particular order and a key appears at most once. Values are never
// absent: an empty value is a present key whose value has length 0.
//
// It imports only the contract (package sdk), never gRPC, the protocol, the server or the
// host end: state backends and the runner's offline tools both read and write it.
package kvstream

import (
	"hash/crc32"
)

// Magic is the header every canonical stream starts with.
const Magic = "flowstate-kv-v1\n"

// MaxRecordSize is the largest key plus value a stream may hold (1 GiB). A reader refuses
// larger lengths as corrupt instead of trying to allocate them.
const MaxRecordSize = 1 << 30

// bufferSize is the size of the reader's and writer's buffers.
const bufferSize = 256 << 10

// castagnoli is the CRC-32C table, hardware accelerated on amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

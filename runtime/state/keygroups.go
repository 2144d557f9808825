package state

import (
	"hash/fnv"

	"github.com/flowstate/flowstate/sdk"
)

// DefaultMaxParallelism is the number of key groups of a job unless configured.
const DefaultMaxParallelism = 128

// KeyGroupFor returns the key group of a record key: a hash of the key modulo
// maxParallelism. Every key maps to exactly one key group for the life of a job, so state
// can be split by key group when a job is restored with another parallelism.
func KeyGroupFor(key []byte, maxParallelism int) int {
	h := fnv.New32a()
	h.Write(key)
	x := h.Sum32()
	// Finalize as murmur3's fmix32 does, so similar keys spread evenly.
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	return int(x % uint32(maxParallelism))
}

// KeyGroupRangeFor returns the contiguous key groups owned by subtask i of an operator with
// the given parallelism, as Flink assigns them.
func KeyGroupRangeFor(maxParallelism, parallelism, i int) sdk.KeyGroupRange {
	start := (i*maxParallelism + parallelism - 1) / parallelism
	end := ((i+1)*maxParallelism + parallelism - 1) / parallelism
	return sdk.KeyGroupRange{Start: start, End: end}
}

// SubtaskForKeyGroup returns the subtask that owns key group g.
func SubtaskForKeyGroup(maxParallelism, parallelism, g int) int {
	return g * parallelism / maxParallelism
}

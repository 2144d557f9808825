package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// A frame is one message of a repartition stream. It starts with a header: the format's
// version (one byte), its kind (one byte: frameData or frameEnd), then as uvarints the
// writing task, that writer's owner epoch on its marker chain, the partition count and
// the max parallelism it was written for. A data frame then holds one or more records,
// each the uvarint length of its encoding and the encoding; an end frame holds nothing
// more.
const (
	frameVersion = 1
	frameData    = 'd'
	frameEnd     = 'e'
)

// frameHeader is a frame's header.
type frameHeader struct {
	kind           byte
	task           int
	epoch          uint64
	partitions     int
	maxParallelism int
}

func appendFrameHeader(b []byte, h frameHeader) []byte {
	b = append(b, frameVersion, h.kind)
	b = binary.AppendUvarint(b, uint64(h.task))
	b = binary.AppendUvarint(b, h.epoch)
	b = binary.AppendUvarint(b, uint64(h.partitions))
	return binary.AppendUvarint(b, uint64(h.maxParallelism))
}

var errShortFrame = errors.New("the frame ends inside its header")

// readFrameHeader reads the header of frame b and returns it with the rest of b.
func readFrameHeader(b []byte) (frameHeader, []byte, error) {
	var h frameHeader
	if len(b) < 2 {
		return h, nil, errShortFrame
	}
	if b[0] != frameVersion {
		return h, nil, fmt.Errorf("frame format version %d, this reader knows %d", b[0], frameVersion)
	}
	h.kind = b[1]
	if h.kind != frameData && h.kind != frameEnd {
		return h, nil, fmt.Errorf("frame kind %q, want %q (data) or %q (end)", h.kind, frameData, frameEnd)
	}
	b = b[2:]
	var v [4]uint64
	for i := range v {
		x, k := binary.Uvarint(b)
		if k <= 0 {
			return h, nil, errShortFrame
		}
		v[i], b = x, b[k:]
	}
	if v[0] > 1<<31 || v[2] > 1<<31 || v[3] > 1<<31 {
		return h, nil, fmt.Errorf("frame header out of range (task %d, %d partitions, max parallelism %d)", v[0], v[2], v[3])
	}
	h.task, h.epoch, h.partitions, h.maxParallelism = int(v[0]), v[1], int(v[2]), int(v[3])
	return h, b, nil
}

// frameMsg is what a repartition writer hands its Sink: a frame for a partition.
type frameMsg struct {
	partition int
	data      []byte
}

// formatFrame is the Sink's Format of frames: the partition is the subject's key.
func formatFrame(rec any) (string, []byte, error) {
	f, ok := rec.(frameMsg)
	if !ok {
		return "", nil, fmt.Errorf("a repartition writer takes frames, not %T", rec)
	}
	return strconv.Itoa(f.partition), f.data, nil
}

package jmstorage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/flowstate/flowstate/sdk"
)

// A checkpoint file (_metadata written when a dir is configured) is self-contained:
//
//	magic "FLOWSTATE-JM1\n"
//	uvarint len, job id; varint checkpoint id; one byte: 1 for a savepoint, else 0
//	uvarint len, the runner's metadata bytes
//	uvarint count, then count times: uvarint len, ref; uvarint len, blob bytes
//	uint32 big-endian CRC-32C of everything before it
const fileMagic = "FLOWSTATE-JM1\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileBlob is one state blob inside a checkpoint file.
type fileBlob struct {
	ref  string
	data []byte
}

// fileHeader describes the checkpoint a file holds.
type fileHeader struct {
	job       string
	id        int64
	savepoint bool
}

// encodeFile serializes a checkpoint into the checkpoint file format.
func encodeFile(h fileHeader, metadata []byte, blobs []fileBlob) []byte {
	n := len(fileMagic) + binary.MaxVarintLen64*4 + 1 + len(h.job) + len(metadata) + 4
	for _, b := range blobs {
		n += 2*binary.MaxVarintLen64 + len(b.ref) + len(b.data)
	}
	out := make([]byte, 0, n)
	out = append(out, fileMagic...)
	out = binary.AppendUvarint(out, uint64(len(h.job)))
	out = append(out, h.job...)
	out = binary.AppendVarint(out, h.id)
	kind := byte(0)
	if h.savepoint {
		kind = 1
	}
	out = append(out, kind)
	out = binary.AppendUvarint(out, uint64(len(metadata)))
	out = append(out, metadata...)
	out = binary.AppendUvarint(out, uint64(len(blobs)))
	for _, b := range blobs {
		out = binary.AppendUvarint(out, uint64(len(b.ref)))
		out = append(out, b.ref...)
		out = binary.AppendUvarint(out, uint64(len(b.data)))
		out = append(out, b.data...)
	}
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// decodeFile parses a checkpoint file; errors wrap sdk.ErrCorrupt.
func decodeFile(b []byte) (h fileHeader, metadata []byte, blobs []fileBlob, err error) {
	if len(b) < len(fileMagic)+4 || string(b[:len(fileMagic)]) != fileMagic {
		return h, nil, nil, fmt.Errorf("not a jmstorage checkpoint file (bad header): %w", sdk.ErrCorrupt)
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return h, nil, nil, fmt.Errorf("checksum mismatch: %w", sdk.ErrCorrupt)
	}
	r := body[len(fileMagic):]
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(r)
		if k <= 0 || n > uint64(len(r)-k) {
			return nil, fmt.Errorf("truncated record: %w", sdk.ErrCorrupt)
		}
		v := r[k : k+int(n)]
		r = r[k+int(n):]
		return v, nil
	}
	job, err := next()
	if err != nil {
		return h, nil, nil, err
	}
	h.job = string(job)
	id, k := binary.Varint(r)
	if k <= 0 || len(r) < k+1 || r[k] > 1 {
		return h, nil, nil, fmt.Errorf("bad header: %w", sdk.ErrCorrupt)
	}
	h.id, h.savepoint = id, r[k] == 1
	r = r[k+1:]
	if metadata, err = next(); err != nil {
		return h, nil, nil, err
	}
	count, k := binary.Uvarint(r)
	if k <= 0 || count > uint64(len(r)) {
		return h, nil, nil, fmt.Errorf("bad blob count: %w", sdk.ErrCorrupt)
	}
	r = r[k:]
	blobs = make([]fileBlob, 0, count)
	for i := uint64(0); i < count; i++ {
		ref, err := next()
		if err != nil {
			return h, nil, nil, err
		}
		data, err := next()
		if err != nil {
			return h, nil, nil, err
		}
		blobs = append(blobs, fileBlob{ref: string(ref), data: data})
	}
	if len(r) != 0 {
		return h, nil, nil, fmt.Errorf("%d trailing bytes: %w", len(r), sdk.ErrCorrupt)
	}
	return h, metadata, blobs, nil
}

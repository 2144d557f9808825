package sdk

import (
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C (Castagnoli) of b: the checksum StreamStateHandle.Checksum
// carries.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// NewChecksum returns a hash computing Checksum over the bytes written to it.
func NewChecksum() hash.Hash32 { return crc32.New(castagnoli) }

// VerifyingReader returns a reader of rc, the bytes of h, that checks them against h as
// they are read: more bytes than h.Size, fewer at the end, or (when h.Checksum is set) a
// CRC-32C that differs is an error wrapping ErrCorrupt. The runner reads every handle
// through it; StateReader implementations can too.
func VerifyingReader(rc io.ReadCloser, h StreamStateHandle) io.ReadCloser {
	return &verifyingReader{rc: rc, h: h, crc: NewChecksum()}
}

type verifyingReader struct {
	rc  io.ReadCloser
	h   StreamStateHandle
	crc hash.Hash32
	n   int64
	err error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.crc.Write(p[:n])
	v.n += int64(n)
	if v.n > v.h.Size {
		v.err = fmt.Errorf("state %s: more than the %d bytes its handle records: %w", v.name(), v.h.Size, ErrCorrupt)
		return n, v.err
	}
	if err == io.EOF {
		if v.n != v.h.Size {
			v.err = fmt.Errorf("state %s: %d bytes, its handle records %d (truncated?): %w", v.name(), v.n, v.h.Size, ErrCorrupt)
			return n, v.err
		}
		if v.h.Checksum != 0 && v.crc.Sum32() != v.h.Checksum {
			v.err = fmt.Errorf("state %s: checksum %08x, its handle records %08x: %w", v.name(), v.crc.Sum32(), v.h.Checksum, ErrCorrupt)
			return n, v.err
		}
	}
	return n, err
}

func (v *verifyingReader) name() string {
	if v.h.Ref == "" {
		return "(inline)"
	}
	return v.h.Ref
}

func (v *verifyingReader) Close() error { return v.rc.Close() }

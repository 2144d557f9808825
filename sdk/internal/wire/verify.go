package wire

import (
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C (Castagnoli) of b: the checksum a StreamStateHandle
// carries.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// NewChecksum returns a hash computing Checksum over the bytes written to it.
func NewChecksum() hash.Hash32 { return crc32.New(castagnoli) }

// Expect is what a state stream's handle records of its bytes: its reference (for
// messages; "" for inline bytes), size and checksum (0: not recorded).
type Expect struct {
	Ref      string
	Size     int64
	Checksum uint32
}

// VerifyingReader returns a reader of rc that checks the bytes against want as they are
// read: more bytes than want.Size, fewer at the end, or (when want.Checksum is set) a
// CRC-32C that differs is an error wrapping corrupt (sdk.ErrCorrupt).
func VerifyingReader(rc io.ReadCloser, want Expect, corrupt error) io.ReadCloser {
	return &verifyingReader{rc: rc, want: want, corrupt: corrupt, crc: NewChecksum()}
}

type verifyingReader struct {
	rc      io.ReadCloser
	want    Expect
	corrupt error
	crc     hash.Hash32
	n       int64
	err     error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.crc.Write(p[:n])
	v.n += int64(n)
	if v.n > v.want.Size {
		v.err = fmt.Errorf("state %s: more than the %d bytes its handle records: %w", v.name(), v.want.Size, v.corrupt)
		return n, v.err
	}
	if err == io.EOF {
		if v.n != v.want.Size {
			v.err = fmt.Errorf("state %s: %d bytes, its handle records %d (truncated?): %w", v.name(), v.n, v.want.Size, v.corrupt)
			return n, v.err
		}
		if v.want.Checksum != 0 && v.crc.Sum32() != v.want.Checksum {
			v.err = fmt.Errorf("state %s: checksum %08x, its handle records %08x: %w", v.name(), v.crc.Sum32(), v.want.Checksum, v.corrupt)
			return n, v.err
		}
	}
	return n, err
}

func (v *verifyingReader) name() string {
	if v.want.Ref == "" {
		return "(inline)"
	}
	return v.want.Ref
}

func (v *verifyingReader) Close() error { return v.rc.Close() }

package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Codec turns state values into bytes and back.
type Codec[T any] interface {
	// Encode appends the encoding of v to dst.
	Encode(dst []byte, v T) []byte
	// Decode decodes a value Encode produced. The value it returns must not refer to b's
	// memory: the store reuses that memory for the key's next value.
	Decode(b []byte) (T, error)
}

// Int64 encodes int64 values as varints.
var Int64 Codec[int64] = int64Codec{}

// String encodes strings as their bytes.
var String Codec[string] = stringCodec{}

// Bytes stores byte slices as they are.
var Bytes Codec[[]byte] = bytesCodec{}

// JSON returns a codec that encodes values of T with encoding/json.
func JSON[T any]() Codec[T] { return jsonCodec[T]{} }

type int64Codec struct{}

func (int64Codec) Encode(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }
func (int64Codec) Decode(b []byte) (int64, error) {
	v, n := binary.Varint(b)
	if n <= 0 || n != len(b) {
		return 0, fmt.Errorf("decode int64 state: malformed varint of %d bytes", len(b))
	}
	return v, nil
}

type stringCodec struct{}

func (stringCodec) Encode(dst []byte, v string) []byte { return append(dst, v...) }
func (stringCodec) Decode(b []byte) (string, error)    { return string(b), nil }

type bytesCodec struct{}

func (bytesCodec) Encode(dst []byte, v []byte) []byte { return append(dst, v...) }
func (bytesCodec) Decode(b []byte) ([]byte, error)    { return append([]byte(nil), b...), nil }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Encode(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Values that cannot be marshalled are a programming error in the job; store
		// nothing rather than panic inside the task.
		return dst
	}
	return append(dst, b...)
}

func (jsonCodec[T]) Decode(b []byte) (T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("decode JSON state: %w", err)
	}
	return v, nil
}

package dataflow

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
)

// codec turns the records of a keyed exchange into bytes and back, so that they can cross
// machines: in distributed mode (Job.Cut) each KeyBy becomes a repartition stream, whose
// messages carry the encoded records. Within one runner records cross exchanges as Go
// values and are never encoded.
type codec struct {
	typ    string // the records' type, for errors
	encode func(b []byte, rec any) ([]byte, error)
	decode func(b []byte) (any, error)
}

// defaultCodec returns the codec of records of type T that needs no help: a string or a
// []byte as it is, or a type whose value has an AppendBinary (encoding.BinaryAppender) or
// MarshalBinary method and whose pointer has UnmarshalBinary. It returns a codec whose
// functions are nil for any other type: the job runs on one runner, and Cut refuses it
// naming the type (WithCodec gives one).
func defaultCodec[T any]() *codec {
	c := &codec{typ: reflect.TypeFor[T]().String()}
	var zero T
	switch any(zero).(type) {
	case string:
		c.encode = func(b []byte, rec any) ([]byte, error) { return append(b, rec.(string)...), nil }
		c.decode = func(b []byte) (any, error) { return string(b), nil }
		return c
	case []byte:
		c.encode = func(b []byte, rec any) ([]byte, error) { return append(b, rec.([]byte)...), nil }
		c.decode = func(b []byte) (any, error) { return slices.Clone(b), nil }
		return c
	}
	if _, ok := any(&zero).(encoding.BinaryUnmarshaler); !ok {
		return c
	}
	c.decode = func(b []byte) (any, error) {
		var v T
		if err := any(&v).(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
			return nil, err
		}
		return v, nil
	}
	switch any(zero).(type) {
	case encoding.BinaryAppender:
		c.encode = func(b []byte, rec any) ([]byte, error) { return rec.(encoding.BinaryAppender).AppendBinary(b) }
	case encoding.BinaryMarshaler:
		c.encode = func(b []byte, rec any) ([]byte, error) {
			m, err := rec.(encoding.BinaryMarshaler).MarshalBinary()
			return append(b, m...), err
		}
	default:
		c.decode = nil
	}
	return c
}

// WithCodec gives the records of a keyed exchange their encoding, for a job that runs on
// many runners (distributed mode), where the records of each KeyBy travel between runners
// through a repartition stream. encode appends a record's bytes to b; decode returns the
// record of bytes encode wrote (it must not keep b). Records that are strings, []byte, or
// have AppendBinary or MarshalBinary and UnmarshalBinary methods need no WithCodec.
func WithCodec[T any](ks *KeyedStream[T], encode func(b []byte, rec T) ([]byte, error), decode func(b []byte) (T, error)) *KeyedStream[T] {
	out := *ks
	out.codec = &codec{
		typ:    ks.codec.typ,
		encode: func(b []byte, rec any) ([]byte, error) { return encode(b, rec.(T)) },
		decode: func(b []byte) (any, error) { return decode(b) },
	}
	return &out
}

// check reports why the codec cannot carry the exchange into operator op.
func (c *codec) check(op string) error {
	if c == nil || c.encode == nil || c.decode == nil {
		typ := "unknown"
		if c != nil {
			typ = c.typ
		}
		return fmt.Errorf("operator %q: its input records (type %s) have no encoding for a repartition stream: "+
			"give the KeyBy one with dataflow.WithCodec, or AppendBinary/MarshalBinary and UnmarshalBinary methods", op, typ)
	}
	return nil
}

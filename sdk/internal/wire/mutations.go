package wire

import (
	"encoding/binary"
	"errors"
)

// Mutation is one change of a batched write as the protocol carries it: the fields of an
// sdk.Mutation.
type Mutation struct {
	Key, Value []byte
	Delete     bool
}

// PackMutations encodes n mutations, the i-th given by at(i), for WriteRequest.packed:
// uvarint(len(key)) key, then 0 for a delete or uvarint(len(value)+1) value.
func PackMutations(n int, at func(i int) Mutation) []byte {
	size := 0
	for i := range n {
		m := at(i)
		size += len(m.Key) + len(m.Value) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, size)
	for i := range n {
		m := at(i)
		b = binary.AppendUvarint(b, uint64(len(m.Key)))
		b = append(b, m.Key...)
		if m.Delete {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(m.Value))+1)
		b = append(b, m.Value...)
	}
	return b
}

// UnpackMutations calls add for each mutation PackMutations encoded in b, in order; the
// keys and values point into b (and a present value is never nil). It fails on malformed
// input, having added the mutations before the damage.
func UnpackMutations(b []byte, add func(Mutation)) error {
	for len(b) > 0 {
		kl, n := binary.Uvarint(b)
		if n <= 0 || kl > uint64(len(b)-n) {
			return errors.New("malformed packed mutations (key length)")
		}
		key := b[n : n+int(kl) : n+int(kl)]
		b = b[n+int(kl):]
		vl, n := binary.Uvarint(b)
		if n <= 0 || (vl > 0 && vl-1 > uint64(len(b)-n)) {
			return errors.New("malformed packed mutations (value length)")
		}
		if vl == 0 {
			add(Mutation{Key: key, Delete: true})
			b = b[n:]
			continue
		}
		end := n + int(vl-1)
		add(Mutation{Key: key, Value: b[n:end:end]})
		b = b[end:]
	}
	return nil
}

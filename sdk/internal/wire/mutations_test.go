package wire

import (
	"bytes"
	"testing"
)

func TestPackedMutationsRoundTrip(t *testing.T) {
	in := []Mutation{
		{Key: []byte("a"), Value: []byte("1")},
		{Key: []byte("empty"), Value: []byte{}},
		{Key: []byte("gone"), Delete: true},
		{Key: []byte{}, Value: make([]byte, 300)},
	}
	var out []Mutation
	err := UnpackMutations(PackMutations(len(in), func(i int) Mutation { return in[i] }), func(m Mutation) { out = append(out, m) })
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d mutations back, want %d", len(out), len(in))
	}
	for i := range in {
		if !bytes.Equal(out[i].Key, in[i].Key) || out[i].Delete != in[i].Delete || !bytes.Equal(out[i].Value, in[i].Value) {
			t.Fatalf("mutation %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
	if out[1].Value == nil || out[2].Value != nil {
		t.Fatal("a present empty value must stay non-nil and a delete carry none")
	}
	for _, bad := range [][]byte{{5, 'a'}, {1, 'a', 9, 'x'}, {0xff}} {
		if err := UnpackMutations(bad, func(Mutation) {}); err == nil {
			t.Fatalf("malformed %v: no error", bad)
		}
	}
}

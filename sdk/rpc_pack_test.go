package sdk

import (
	"errors"
	"reflect"
	"testing"
)

func TestPackedMutationsRoundTrip(t *testing.T) {
	in := []Mutation{
		{Key: []byte("a"), Value: []byte("1")},
		{Key: []byte("empty"), Value: []byte{}},
		{Key: []byte("gone"), Delete: true},
		{Key: []byte{}, Value: make([]byte, 300)},
	}
	out, err := unpackMutations(nil, packMutations(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d mutations back, want %d", len(out), len(in))
	}
	for i := range in {
		if !reflect.DeepEqual([]byte(out[i].Key), append([]byte{}, in[i].Key...)) || out[i].Delete != in[i].Delete || len(out[i].Value) != len(in[i].Value) {
			t.Fatalf("mutation %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
	if out[1].Value == nil || out[2].Value != nil {
		t.Fatal("a present empty value must stay non-nil and a delete carry none")
	}
	for _, bad := range [][]byte{{5, 'a'}, {1, 'a', 9, 'x'}, {0xff}} {
		if _, err := unpackMutations(nil, bad); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("malformed %v: %v", bad, err)
		}
	}
}

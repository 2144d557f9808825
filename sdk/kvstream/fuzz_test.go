package kvstream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// FuzzReader feeds arbitrary bytes to the Reader: it must never panic, must end every
// stream with io.EOF or an error wrapping sdk.ErrCorrupt, and a stream it accepts must
// re-encode to the very same bytes.
func FuzzReader(f *testing.F) {
	f.Add([]byte(Magic))
	f.Add(encode(f, nil))
	f.Add(encode(f, []record{{[]byte("\x00\x01k"), []byte("v")}, {[]byte("\x00\x02"), []byte{}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		var recs []record
		for {
			k, v, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, sdk.ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				return
			}
			if v == nil {
				t.Fatal("nil value")
			}
			recs = append(recs, record{k, v})
		}
		if again := encode(t, recs); !bytes.Equal(again, data) {
			t.Fatalf("accepted stream re-encodes differently:\n got %q\nwant %q", again, data)
		}
	})
}

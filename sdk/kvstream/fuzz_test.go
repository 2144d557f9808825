package kvstream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// FuzzReader feeds arbitrary bytes to the Reader, plain and chunked: it must never panic,
// must end every stream with io.EOF or an error wrapping sdk.ErrCorrupt, both readers must
// agree, and a stream they accept must re-encode to the very same bytes.
func FuzzReader(f *testing.F) {
	f.Add([]byte(Magic))
	f.Add(encode(f, nil))
	f.Add(encode(f, []record{{[]byte("\x00\x01k"), []byte("v")}, {[]byte("\x00\x02"), []byte{}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		plain, perr := readAll(NewReader(bytes.NewReader(data)))
		chunked, cerr := readAll(NewChunkedReader(bytes.NewReader(data), 0))
		if (perr == nil) != (cerr == nil) || len(plain) != len(chunked) {
			t.Fatalf("the chunked reader disagrees: %d records, %v; plain reader: %d records, %v", len(chunked), cerr, len(plain), perr)
		}
		if perr != nil {
			if !errors.Is(perr, sdk.ErrCorrupt) || !errors.Is(cerr, sdk.ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v / %v", perr, cerr)
			}
			return
		}
		for _, recs := range [][]record{plain, chunked} {
			if again := encode(t, recs); !bytes.Equal(again, data) {
				t.Fatalf("accepted stream re-encodes differently:\n got %q\nwant %q", again, data)
			}
		}
	})
}

// readAll returns every record r reads, as Next returns them (kept, not copied), and the
// error that ended the stream (nil for its proper end).
func readAll(r *Reader) ([]record, error) {
	var recs []record
	for {
		k, v, err := r.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		if v == nil {
			return recs, errors.New("nil value")
		}
		recs = append(recs, record{k, v})
	}
}

package kvstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flowstate/flowstate/sdk"
)

type record struct{ k, v []byte }

func encode(t testing.TB, recs []record) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	for i, r := range recs {
		if err := w.Write(r.k, r.v); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if got := w.Count(); got != uint64(i+1) {
			t.Fatalf("Count after %d records = %d", i+1, got)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return b.Bytes()
}

func decodeAll(r *Reader, view bool) ([]record, error) {
	var out []record
	for {
		var k, v []byte
		var err error
		if view {
			k, v, err = r.NextView()
			k, v = bytes.Clone(k), append([]byte{}, v...)
		} else {
			k, v, err = r.Next()
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, record{k, v})
	}
}

func sample() []record {
	return []record{
		{[]byte("\x00\x01a"), []byte("1")},
		{[]byte("\x00\x02empty"), []byte{}},
		{[]byte{}, []byte("empty key")},
		{[]byte("\x00\x03big"), bytes.Repeat([]byte("x"), 3*bufferSize+17)},
		{bytes.Repeat([]byte("k"), bufferSize-5), []byte("value after a buffer-sized key")},
		{[]byte("\x7f\xffz"), []byte("last")},
	}
}

func TestRoundTrip(t *testing.T) {
	cases := map[string][]record{"empty": nil, "sample": sample()}
	var many []record
	for i := range 100000 {
		many = append(many, record{[]byte(fmt.Sprintf("\x00\x05key-%d", i)), []byte(fmt.Sprint(i * i))})
	}
	cases["many"] = many
	for name, recs := range cases {
		data := encode(t, recs)
		for _, mode := range []string{"next", "view", "onebyte", "dataerr", "half", "chunked", "chunked-onebyte", "chunked-half"} {
			var src io.Reader = bytes.NewReader(data)
			switch mode {
			case "onebyte", "chunked-onebyte":
				if len(data) > 1<<20 {
					continue
				}
				src = iotest.OneByteReader(src)
			case "dataerr":
				src = iotest.DataErrReader(src)
			case "half", "chunked-half":
				src = iotest.HalfReader(src)
			}
			r := NewReader(src)
			if strings.HasPrefix(mode, "chunked") {
				// The smallest chunk: records cross chunk ends, and the big one needs its own.
				// decodeAll keeps what Next returns, so the comparison below also checks that
				// later reads never overwrite earlier records.
				r = NewChunkedReader(src, 0)
			}
			got, err := decodeAll(r, mode == "view")
			if err != nil {
				t.Fatalf("%s/%s: %v", name, mode, err)
			}
			if len(got) != len(recs) {
				t.Fatalf("%s/%s: got %d records, want %d", name, mode, len(got), len(recs))
			}
			for i := range recs {
				if !bytes.Equal(got[i].k, recs[i].k) || !bytes.Equal(got[i].v, recs[i].v) || got[i].v == nil || got[i].k == nil {
					t.Fatalf("%s/%s: record %d differs", name, mode, i)
				}
			}
		}
	}
}

func TestNextOwnsItsSlices(t *testing.T) {
	r := NewReader(bytes.NewReader(encode(t, []record{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("2")}})))
	k1, v1, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(k1) != "a" || string(v1) != "1" {
		t.Fatalf("first record changed to %q=%q after the second Next", k1, v1)
	}
	k1x := append(k1, 'X') // must not overwrite the value
	if string(v1) != "1" || string(k1x) != "aX" {
		t.Fatalf("appending to the key overwrote the value: %q", v1)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("EOF is not sticky: %v", err)
	}
	if r.Count() != 2 {
		t.Fatalf("Count = %d, want 2", r.Count())
	}
}

func TestTruncatedIsCorrupt(t *testing.T) {
	data := encode(t, []record{{[]byte("key"), []byte("value")}, {[]byte("k2"), []byte{}}})
	for n := 0; n < len(data); n++ {
		for _, r := range []*Reader{NewReader(bytes.NewReader(data[:n])), NewChunkedReader(bytes.NewReader(data[:n]), 0)} {
			if _, err := decodeAll(r, false); !errors.Is(err, sdk.ErrCorrupt) {
				t.Fatalf("stream cut at %d of %d bytes: err = %v, want ErrCorrupt", n, len(data), err)
			}
		}
	}
	big := encode(t, []record{{[]byte("k"), bytes.Repeat([]byte("v"), 2*bufferSize)}})
	if _, err := decodeAll(NewReader(bytes.NewReader(big[:len(big)-bufferSize])), false); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("truncated big record: %v, want ErrCorrupt", err)
	}
}

func TestDamageIsCorrupt(t *testing.T) {
	data := encode(t, []record{{[]byte("key"), []byte("value")}, {[]byte("k2"), []byte("v2")}})
	for i := range data {
		for _, bit := range []byte{0x01, 0x80} {
			d := bytes.Clone(data)
			d[i] ^= bit
			for _, r := range []*Reader{NewReader(bytes.NewReader(d)), NewChunkedReader(bytes.NewReader(d), 0)} {
				if _, err := decodeAll(r, false); !errors.Is(err, sdk.ErrCorrupt) {
					t.Fatalf("flipping bit %#x of byte %d: err = %v, want ErrCorrupt", bit, i, err)
				}
			}
		}
	}
	trailing := append(bytes.Clone(data), 0)
	for _, r := range []*Reader{NewReader(bytes.NewReader(trailing)), NewChunkedReader(bytes.NewReader(trailing), 0)} {
		if _, err := decodeAll(r, false); !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("trailing byte: %v, want ErrCorrupt", err)
		}
	}
	huge := append([]byte(Magic), 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'k')
	if _, err := decodeAll(NewReader(bytes.NewReader(huge)), false); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("oversized length: %v, want ErrCorrupt", err)
	}
}

func TestCountMismatchIsCorrupt(t *testing.T) {
	// A stream whose records and checksum are consistent but whose count is wrong.
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.Write([]byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	w.count = 5
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeAll(NewReader(&b), false); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("count mismatch: %v, want ErrCorrupt", err)
	}
}

var errBoom = errors.New("boom")

func TestReaderErrorKeepsIdentity(t *testing.T) {
	data := encode(t, sample())
	src := io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(errBoom))
	_, err := decodeAll(NewReader(src), false)
	if !errors.Is(err, errBoom) || errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("err = %v, want the reader's error and not ErrCorrupt", err)
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errBoom
	}
	f.after--
	return len(p), nil
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter(&failWriter{})
	var err error
	for i := 0; err == nil && i < 100000; i++ {
		err = w.Write([]byte("key"), bytes.Repeat([]byte("v"), 100))
	}
	if !errors.Is(err, errBoom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	if err := w.Close(); !errors.Is(err, errBoom) {
		t.Fatalf("Close after a failed Write: %v, want boom", err)
	}
	if err := NewWriter(&failWriter{}).Close(); !errors.Is(err, errBoom) {
		t.Fatalf("Close: %v, want boom", err)
	}
	var b bytes.Buffer
	w = NewWriter(&b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("k"), nil); err == nil {
		t.Fatal("Write after Close succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestNilValueWrittenAsEmpty(t *testing.T) {
	got, err := decodeAll(NewReader(bytes.NewReader(encode(t, []record{{[]byte("k"), nil}}))), false)
	if err != nil || len(got) != 1 || got[0].v == nil || len(got[0].v) != 0 {
		t.Fatalf("got %v, %v; want one empty, non-nil value", got, err)
	}
}

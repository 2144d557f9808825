package bytesize

import "testing"

func TestParse(t *testing.T) {
	good := map[string]int64{
		"0":        0,
		"1048576":  1048576,
		"64mb":     64 << 20,
		"64 MiB":   64 << 20,
		"64MB":     64 << 20,
		"5m":       5 << 20,
		"20kb":     20 << 10,
		"20 k":     20 << 10,
		"7b":       7,
		"2gb":      2 << 30,
		" 3 GiB ":  3 << 30,
		"1t":       1 << 40,
		"8388607t": 8388607 << 40,
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "-1", "1.5mb", "12 parsecs", "8388608t", "99999999999999999999", "1 2"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

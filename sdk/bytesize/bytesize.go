// Package bytesize parses the human-readable byte sizes of options, such as "64mb", as
// Flink's MemorySize does: a helper for plugins' Configure and the runner's configuration,
// apart from the contract (package sdk). It imports only the standard library and must
// never import anything of the SDK.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits maps a lower-case unit suffix to its multiplier. All multiples are binary:
// "kb", "k", "kib" all mean 1024 bytes, as in Flink's MemorySize.
var sizeUnits = map[string]int64{
	"":    1,
	"b":   1,
	"k":   1 << 10,
	"kb":  1 << 10,
	"kib": 1 << 10,
	"m":   1 << 20,
	"mb":  1 << 20,
	"mib": 1 << 20,
	"g":   1 << 30,
	"gb":  1 << 30,
	"gib": 1 << 30,
	"t":   1 << 40,
	"tb":  1 << 40,
	"tib": 1 << 40,
}

// Parse parses a human-readable byte size such as "64mb", "64 MiB", "5m", "20kb" or
// "1048576". Units are case-insensitive and binary (1 kb = 1024 bytes); a number without a
// unit is a count of bytes. It returns an error naming s for a malformed, negative or
// overflowing size.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a non-negative number with an optional unit (b, kb, mb, gb, tb)", s)
	}
	unit := strings.TrimSpace(t[i:])
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want b, kb, mb, gb or tb)", s, unit)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: overflows 64 bits", s)
	}
	return n * mult, nil
}

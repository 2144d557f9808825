package config

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate/flowstate/runtime/config/flinkkeys"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// durationUnits are the units Flink's TimeUtils accepts; a bare number means milliseconds.
var durationUnits = map[string]time.Duration{
	"":     time.Millisecond,
	"ns":   time.Nanosecond,
	"nano": time.Nanosecond, "nanos": time.Nanosecond, "nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// ParseDuration parses a duration as Flink writes them: "10s", "1min", "500ms", "2 h"; a bare
// number is milliseconds. Go's compound form ("1m30s") is accepted too. Negative durations
// are refused.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("duration %q: want a non-negative number with a unit such as ms, s, min, h", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := durationUnits[unit]
	if !ok {
		if d, err := time.ParseDuration(t); err == nil && d >= 0 {
			return d, nil
		}
		return 0, fmt.Errorf("duration %q: unknown unit %q (want ms, s, min, h or d; a bare number is milliseconds)", s, unit)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("duration %q: too large", s)
	}
	return time.Duration(n) * mult, nil
}

// parseBool accepts true and false in any case, as Flink does.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false")
}

// parseInt parses a decimal integer within [lo, hi].
func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a whole number")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("want a number from %d to %d", lo, hi)
	}
	return n, nil
}

// parseSize parses a size with bytesize.Parse and checks it against def's bounds.
func parseSize(s string, def keyDef) (int64, error) {
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, err
	}
	if def.max > 0 && (n < def.min || n > def.max) {
		return 0, fmt.Errorf("want a size from %d to %d bytes", def.min, def.max)
	}
	return n, nil
}

// parseFloat parses a finite, non-negative number.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("want a non-negative number")
	}
	return f, nil
}

// parsePluginName lower-cases a plugin name and checks its syntax.
func parsePluginName(s string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if !pluginNameRE.MatchString(name) {
		return "", fmt.Errorf("want a plugin name matching [a-z0-9][a-z0-9-]*")
	}
	return name, nil
}

// parseStorageName parses a storage name, mapping Flink's jobmanager and filesystem to the
// plugins that implement them.
func parseStorageName(s string) (string, error) {
	name, err := parsePluginName(s)
	if err != nil {
		return "", err
	}
	if alias, ok := storageAliases[name]; ok {
		return alias, nil
	}
	return name, nil
}

// parseBackendName parses a state backend name. Other names of the built-in backends map
// to them (rocksdb is leveldb), and ForSt is refused. legacyKey says the value is that of
// the deprecated key state.backend, whose rocksdb was Flink's old RocksDBStateBackend: that
// value, like the deprecated values of the seed's Old -> New table, sets legacy.
func parseBackendName(s string, legacyKey bool) (backendValue, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	if msg, ok := flinkkeys.RefusedBackend(lower); ok {
		return backendValue{}, fmt.Errorf("%w: %s", ErrUnsupported, msg)
	}
	if name, ok := flinkkeys.BackendAlias(lower); ok && !(legacyKey && lower == "rocksdb") {
		return backendValue{name: name, alias: lower}, nil
	}
	name, err := parsePluginName(s)
	if err != nil {
		return backendValue{}, err
	}
	if lb, ok := legacyBackendValues[name]; ok {
		return backendValue{name: lb.backend, legacy: &lb}, nil
	}
	return backendValue{name: name}, nil
}

// parseRestartType accepts Flink's restart strategies and their aliases.
func parseRestartType(s string) (string, error) {
	switch t := strings.ToLower(strings.TrimSpace(s)); t {
	case "fixed-delay", "fixeddelay":
		return RestartFixedDelay, nil
	case "failure-rate", "failurerate":
		return RestartFailureRate, nil
	case "exponential-delay", "exponentialdelay":
		return RestartExponentialDelay, nil
	case "none", "off", "disable":
		return RestartNone, nil
	}
	return "", fmt.Errorf("want exponential-delay, fixed-delay, failure-rate or none")
}

// parseEnum returns the value of values that s spells, in any case, as Flink reads enums.
func parseEnum(s string, values []string) (string, error) {
	v := strings.TrimSpace(s)
	for _, want := range values {
		if strings.EqualFold(v, want) {
			return want, nil
		}
	}
	return "", fmt.Errorf("want %s or %s", strings.Join(values[:len(values)-1], ", "), values[len(values)-1])
}

// resolvePointer parses a checkpoint or savepoint pointer: "latest", "latest-if-any", a
// URI or storage pointer with a scheme (s3://..., jm:job/chk-3), or a path, resolved
// against base.
func resolvePointer(s, base string) (string, error) {
	v := strings.TrimSpace(s)
	for _, word := range []string{"latest", "latest-if-any"} {
		if strings.EqualFold(v, word) {
			return word, nil
		}
	}
	if i := strings.Index(v, ":"); i > 1 && pointerSchemeRE.MatchString(v[:i]) {
		if hasScheme(v) {
			return resolvePath(v, base)
		}
		return v, nil
	}
	return resolvePath(v, base)
}

var pointerSchemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`)

// hasScheme reports whether p is a URI with a scheme, such as s3://bucket/x or file:///x.
func hasScheme(p string) bool {
	i := strings.Index(p, "://")
	if i <= 0 {
		return false
	}
	for _, r := range p[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// resolvePath makes a relative path absolute against base. URIs (file://, s3://, ...) stay
// as written; a file:// URI must be absolute.
func resolvePath(p, base string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", fmt.Errorf("want a path")
	}
	if hasScheme(p) {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("malformed URI: %w", err)
		}
		if strings.EqualFold(u.Scheme, "file") && (u.Path == "" || !filepath.IsAbs(u.Path) || (u.Host != "" && u.Host != "localhost")) {
			return "", fmt.Errorf("a file:// URI needs an absolute path and no host, as in file:///var/flowstate (three slashes)")
		}
		return p, nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if base == "" {
		base = "."
	}
	abs, err := filepath.Abs(filepath.Join(base, p))
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", p, err)
	}
	return abs, nil
}

// LocalPath returns the local file path a configured path or file:// URI names, and false
// for other URIs (s3://, hdfs://, ...).
func LocalPath(p string) (string, bool) {
	if !hasScheme(p) {
		return p, p != ""
	}
	u, err := url.Parse(p)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return "", false
	}
	return u.Path, true
}

// isPathOption reports whether a plugin option holds a path that resolves against the
// configuration file's directory: localdir, dir, and any option ending in -dir.
func isPathOption(opt string) bool {
	return opt == "localdir" || opt == "dir" || strings.HasSuffix(opt, "-dir")
}

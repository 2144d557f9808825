package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/sdk/bytesize"
)

// IgnoredKey is a key of the file that only concerns a Flink cluster (or a tuning Flowstate
// has no equivalent of): it loads, has no effect, and explain lists it.
type IgnoredKey struct {
	// Key is the key as written.
	Key string `json:"key"`
	// Line is its line in the file; 0 when it was set on the command line.
	Line int `json:"line,omitempty"`
	// Flag is the command-line flag that set it ("-D"), "" for the file.
	Flag string `json:"flag,omitempty"`
	// Reason says what the key is about and why it does not apply.
	Reason string `json:"reason"`
}

// The catalog indexed: exact keys and Flink's deprecated spellings, and the namespaces,
// longest first so that the most specific one wins.
var (
	flinkExact      = map[string]*flinkKey{}
	flinkDeprecated = map[string]*flinkKey{}
	flinkPrefixes   []*flinkKey
)

func init() {
	for i := range flinkKeys {
		e := &flinkKeys[i]
		if e.status == flinkSupported {
			continue // currentKeys and deprecatedKeys read these
		}
		if e.namespace() {
			flinkPrefixes = append(flinkPrefixes, e)
			continue
		}
		flinkExact[e.key] = e
		for _, d := range e.dep {
			flinkDeprecated[d] = e
		}
	}
	sort.SliceStable(flinkPrefixes, func(i, j int) bool { return len(flinkPrefixes[i].key) > len(flinkPrefixes[j].key) })
}

// lookupFlink finds the catalog entry of a key Flowstate does not read itself: an exact
// key, one of Flink's deprecated spellings (deprecated is then true), or a key in a
// namespace.
func lookupFlink(key string) (e *flinkKey, deprecated bool, ok bool) {
	if e, ok := flinkExact[key]; ok {
		return e, false, true
	}
	if e, ok := flinkDeprecated[key]; ok {
		return e, true, true
	}
	for _, e := range flinkPrefixes {
		if strings.HasPrefix(key, e.key) {
			return e, false, true
		}
	}
	return nil, false, false
}

// normalize turns a value of kind into a canonical text, so that "64mb" and "67108864"
// compare equal as sizes and "true" and "TRUE" as booleans.
func normalize(kind valueKind, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch kind {
	case kindBool:
		b, err := parseBool(v)
		return strconv.FormatBool(b), err
	case kindInt:
		n, err := parseInt(v, math.MinInt64, math.MaxInt64)
		return strconv.FormatInt(n, 10), err
	case kindSize:
		n, err := bytesize.Parse(v)
		return strconv.FormatInt(n, 10), err
	case kindDuration:
		d, err := ParseDuration(v)
		return strconv.FormatInt(int64(d), 10), err
	case kindFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", fmt.Errorf("want a number")
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case kindEnum:
		return strings.ToUpper(v), nil
	}
	return v, nil
}

// flinkLeaf applies a key of the catalog that Flowstate does not read: it is ignored (and
// listed), noted as having no effect, or, for a feature Flowstate does not implement,
// refused unless the value is Flink's default. backend is the state backend the
// configuration selects.
func (p *parser) flinkLeaf(s spelling, backend string) {
	e, c := s.info.flink, p.c
	if s.info.deprecated {
		p.deprecate(s.leaf, fmt.Sprintf("%s is deprecated: use %s", s.key, e.key))
	}
	if e.backend != "" && e.backend != backend {
		c.warnf("%s%s is ignored: the state backend is %s, not %s", p.at(s.leaf), s.key, backend, backendLabel(e.backend))
		return
	}
	switch e.status {
	case flinkIgnored:
		c.Ignored = append(c.Ignored, IgnoredKey{Key: s.key, Line: s.line, Flag: s.flag, Reason: e.what})
	case flinkInert:
		p.note(s.leaf, fmt.Sprintf("%s has no effect: it only matters with %s, which Flowstate does not support", s.key, featureOf(e.target)))
	case flinkRefused:
		p.refused(s, e)
	}
}

// refused loads a key of a feature Flowstate does not implement when it keeps the feature
// off (Flink's default, or a value in also), with a note, and refuses it otherwise.
func (p *parser) refused(s spelling, e *flinkKey) {
	if msg := s.shapeError(); msg != "" {
		p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w: %s", ErrBadValue, msg))
		return
	}
	got, err := normalize(e.kind, s.value)
	if err != nil {
		p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w %q: %v", ErrBadValue, s.value, err))
		return
	}
	if e.def != "" {
		if def, _ := normalize(e.kind, e.def); got == def {
			p.note(s.leaf, fmt.Sprintf("%s: %s is Flink's default and loads; Flowstate does not implement %s", s.key, strings.TrimSpace(s.value), e.what))
			return
		}
	}
	for _, a := range e.also {
		if v, _ := normalize(e.kind, a); got == v {
			p.note(s.leaf, fmt.Sprintf("%s: %s loads and has no effect: Flowstate does not implement %s", s.key, strings.TrimSpace(s.value), e.what))
			return
		}
	}
	hint := "remove the key"
	if e.def != "" {
		hint = fmt.Sprintf("remove the key or set Flink's default %s", e.def)
	}
	p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w: Flowstate does not implement %s (%s: %s); %s",
		ErrUnsupported, e.what, s.key, strings.TrimSpace(s.value), hint))
}

// featureOf names the feature a key of the catalog turns on, for notes about the keys
// that depend on it.
func featureOf(key string) string {
	if key == KeyStateBackend {
		return "state.backend.type: forst"
	}
	if e, ok := flinkExact[key]; ok && e.what != "" {
		return fmt.Sprintf("%s (%s)", e.what, key)
	}
	return key
}

// backendLabel names a backend in messages about the RocksDB keys.
func backendLabel(name string) string {
	if name == LevelDB {
		return "rocksdb (leveldb)"
	}
	return name
}

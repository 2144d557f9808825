package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/runtime/config/flinkkeys"
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

// normalize turns a value of kind into a canonical text, so that "64mb" and "67108864"
// compare equal as sizes and "true" and "TRUE" as booleans.
func normalize(kind flinkkeys.Kind, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch kind {
	case flinkkeys.KindBool:
		b, err := parseBool(v)
		return strconv.FormatBool(b), err
	case flinkkeys.KindInt:
		n, err := parseInt(v, math.MinInt64, math.MaxInt64)
		return strconv.FormatInt(n, 10), err
	case flinkkeys.KindSize:
		n, err := bytesize.Parse(v)
		return strconv.FormatInt(n, 10), err
	case flinkkeys.KindDuration:
		d, err := ParseDuration(v)
		return strconv.FormatInt(int64(d), 10), err
	case flinkkeys.KindFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", fmt.Errorf("want a number")
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case flinkkeys.KindEnum:
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
		p.deprecate(s.leaf, fmt.Sprintf("%s is deprecated: use %s", s.key, e.Name))
	}
	if e.Backend != "" && e.Backend != backend {
		c.warnf("%s%s is ignored: the state backend is %s, not %s", p.at(s.leaf), s.key, backend, backendLabel(e.Backend))
		return
	}
	switch e.Status {
	case flinkkeys.Ignored:
		c.Ignored = append(c.Ignored, IgnoredKey{Key: s.key, Line: s.line, Flag: s.flag, Reason: e.What})
	case flinkkeys.Inert:
		p.note(s.leaf, fmt.Sprintf("%s has no effect: it only matters with %s, which Flowstate does not support", s.key, flinkkeys.FeatureOf(e.Target)))
	case flinkkeys.Refused:
		p.refused(s, e)
	}
}

// refused loads a key of a feature Flowstate does not implement when it keeps the feature
// off (Flink's default, or a value in Also), with a note, and refuses it otherwise.
func (p *parser) refused(s spelling, e *flinkkeys.Key) {
	if msg := s.shapeError(); msg != "" {
		p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w: %s", ErrBadValue, msg))
		return
	}
	got, err := normalize(e.Kind, s.value)
	if err != nil {
		p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w %q: %v", ErrBadValue, s.value, err))
		return
	}
	if e.Default != "" {
		if def, _ := normalize(e.Kind, e.Default); got == def {
			p.note(s.leaf, fmt.Sprintf("%s: %s is Flink's default and loads; Flowstate does not implement %s", s.key, strings.TrimSpace(s.value), e.What))
			return
		}
	}
	for _, a := range e.Also {
		if v, _ := normalize(e.Kind, a); got == v {
			p.note(s.leaf, fmt.Sprintf("%s: %s loads and has no effect: Flowstate does not implement %s", s.key, strings.TrimSpace(s.value), e.What))
			return
		}
	}
	hint := "remove the key"
	if e.Default != "" {
		hint = fmt.Sprintf("remove the key or set Flink's default %s", e.Default)
	}
	p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w: Flowstate does not implement %s (%s: %s); %s",
		ErrUnsupported, e.What, s.key, strings.TrimSpace(s.value), hint))
}

// backendLabel names a backend in messages about the RocksDB keys.
func backendLabel(name string) string {
	if name == LevelDB {
		return "rocksdb (leveldb)"
	}
	return name
}

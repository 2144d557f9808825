package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/runtime/config/flinkkeys"
)

// spelling is one written key of a setting, with what it means.
type spelling struct {
	leaf
	info keyInfo
}

// message is a deprecation message or a note and the line it is about, for sorting.
type message struct {
	line int
	msg  string
}

// parser holds the state of one Parse.
type parser struct {
	c    *Config
	errs errorList
	base string // directory relative paths of the file resolve against
	deps []message
	// notes say how Flink keys were read: aliases, and keys that load without effect.
	notes []message
	ns    *namespaces
	// fileBackend and fileStorage are what the file (or -D) selects, for messages.
	fileBackend, fileStorage string
	// backend is the winning spelling of state.backend.type and its legacy meaning.
	backend       *spelling
	backendLegacy *legacyBackend
	backendAll    []spelling
	// flinkLeaves are the keys of the Flink catalog that Flowstate does not read.
	flinkLeaves   []spelling
	storageGiven  bool
	restartGiven  bool
	attemptsGiven bool
	// restartKeys are the spellings of each strategy's keys that the file sets.
	restartKeys map[string][]spelling
	// raw are the values of the current keys as written, for messages.
	raw           map[string]string
	address, port string
}

// backendValue is a parsed state backend name; it prints as the plugin name so that
// "filesystem" and "hashmap" compare equal as backends.
type backendValue struct {
	name   string
	legacy *legacyBackend
	alias  string // the name written when it is another name of the plugin (rocksdb)
}

func (b backendValue) String() string { return b.name }

// Parse parses and validates a configuration file's contents. file names the file in
// messages; relative paths in the file resolve against filepath.Dir(file). All problems are
// reported, in line order, each naming its key and line.
func Parse(data []byte, file string) (*Config, error) { return ParseWith(data, file, nil) }

// ParseWith is Parse with command-line overrides, which win over the file. Relative paths
// in overrides resolve against the working directory.
func ParseWith(data []byte, file string, overrides []Override) (*Config, error) {
	doc, flat, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	p := &parser{c: defaults(file), base: ".", restartKeys: map[string][]spelling{}, raw: map[string]string{}}
	if file != "" {
		p.base = filepath.Dir(file)
	}
	if flat {
		p.note(leaf{line: 1}, "not valid YAML: read line by line as \"key: value\", as Flink 1.x reads flink-conf.yaml")
	}
	leaves := append(flatten(doc, file, &p.errs), overrideLeaves(overrides)...)
	p.c.Overrides = append([]Override(nil), overrides...)
	p.selectNamespaces(leaves)
	groups, order := p.group(leaves)
	for _, canonical := range order {
		p.apply(canonical, groups[canonical])
	}
	p.finish()
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	c := p.c
	c.Deprecations = append(c.Deprecations, sorted(p.deps)...)
	c.Notes = append(c.Notes, sorted(p.notes)...)
	c.CheckpointStorage = c.configuredStorage()
	c.fillOptions()
	c.Warnings = append([]string{}, c.parseWarnings...)
	return c, nil
}

// sorted returns the messages in line order.
func sorted(ms []message) []string {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].line < ms[j].line })
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.msg
	}
	return out
}

// selectNamespaces finds the plugins the file and the overrides select, whose options
// they may then set.
func (p *parser) selectNamespaces(leaves []leaf) {
	p.ns = newNamespaces()
	for _, l := range leaves {
		switch l.key {
		case KeyStateBackend, "state.backend":
			if v, err := parseBackendName(l.value, l.key != KeyStateBackend); err == nil {
				p.ns.addBackend(v.name)
				p.fileBackend = v.name
			}
		case KeyCheckpointStorage, "state.checkpoint-storage":
			if name, err := parseStorageName(l.value); err == nil {
				p.ns.addStorage(name)
				p.fileStorage = name
			}
		}
	}
}

// group classifies the leaves and groups the spellings of each setting under its current
// key, in file order, then overrides. An override replaces every spelling of its setting in
// the file, and a later override an earlier one. Unknown and duplicate keys are reported;
// keys of the Flink catalog that Flowstate does not read go to flinkLeaves.
func (p *parser) group(leaves []leaf) (map[string][]spelling, []string) {
	seen := map[string]int{}
	var all []spelling
	byFlag := map[string]int{} // canonical key -> index in all of its latest override
	for _, l := range leaves {
		if l.flag == "" {
			if prev, dup := seen[l.key]; dup {
				p.errs.add(p.c.File, l.line, l.key, fmt.Errorf("%w: also set at line %d", ErrDuplicate, prev))
				continue
			}
			seen[l.key] = l.line
		}
		info, ok := classify(l.key, p.ns)
		if !ok {
			p.errs.addAt(p.c.File, l, unknownKeyError(l.key, p.ns, p.fileBackend, p.fileStorage))
			continue
		}
		if l.flag != "" {
			byFlag[info.canonical] = len(all)
		}
		all = append(all, spelling{l, info})
	}
	groups := map[string][]spelling{}
	var order []string
	for i, s := range all {
		if j, overridden := byFlag[s.info.canonical]; overridden && j != i {
			continue
		}
		if s.flag != "" {
			p.c.flags[s.key], p.c.flags[s.info.canonical] = s.flag, s.flag
		} else {
			p.c.lines[s.key] = s.line
		}
		if s.info.flink != nil {
			p.flinkLeaves = append(p.flinkLeaves, s)
			continue
		}
		if _, ok := groups[s.info.canonical]; !ok {
			order = append(order, s.info.canonical)
		}
		groups[s.info.canonical] = append(groups[s.info.canonical], s)
	}
	return groups, order
}

// value parses one written value of a setting.
func (p *parser) value(s spelling) (any, error) {
	if msg := s.shapeError(); msg != "" {
		return nil, errors.New(msg)
	}
	raw := s.value
	base := p.base
	if s.flag != "" {
		base = "."
	}
	if s.info.scope != scopeNone {
		if isPathOption(s.info.option) {
			if s.info.alias && strings.Contains(raw, ",") {
				return nil, fmt.Errorf("a list of directories, as Flink takes: %s takes one directory, give one", s.info.canonical)
			}
			return resolvePath(raw, base)
		}
		return strings.TrimSpace(raw), nil
	}
	def := s.info.def
	switch def.kind {
	case kindBackend:
		return parseBackendName(raw, s.info.deprecated)
	case kindStorage:
		return parseStorageName(raw)
	case kindPath:
		return resolvePath(raw, base)
	case kindPointer:
		return resolvePointer(raw, base)
	case kindDuration:
		return ParseDuration(raw)
	case kindInt:
		return parseInt(raw, def.min, def.max)
	case kindBool:
		return parseBool(raw)
	case kindSize:
		return parseSize(raw, def)
	case kindFloat:
		return parseFloat(raw)
	case kindRestartType:
		return parseRestartType(raw)
	case kindEnum:
		return parseEnum(raw, def.values)
	}
	v := strings.TrimSpace(raw)
	if v == "" {
		return "", fmt.Errorf("want a non-empty value")
	}
	return v, nil
}

// apply checks the spellings of one setting against each other and applies the winner.
func (p *parser) apply(canonical string, spellings []spelling) {
	values := make([]any, len(spellings))
	for i, s := range spellings {
		v, err := p.value(s)
		switch {
		case errors.Is(err, ErrUnsupported):
			p.errs.addAt(p.c.File, s.leaf, err)
			return
		case err != nil:
			p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w %q: %v", ErrBadValue, masked(canonical, s.value), err))
			return
		}
		values[i] = v
	}
	win := 0
	for i, s := range spellings {
		if fmt.Sprint(values[i]) != fmt.Sprint(values[0]) {
			first := spellings[0]
			p.errs.addAt(p.c.File, s.leaf, fmt.Errorf("%w: %s: %s (%s) and %s: %s (%s) disagree; keep only %s",
				ErrConflict, first.key, masked(canonical, strings.TrimSpace(first.value)), p.origin(first.leaf), s.key, masked(canonical, strings.TrimSpace(s.value)), p.origin(s.leaf), canonical))
			return
		}
		if rank(s.info) < rank(spellings[win].info) {
			win = i
		}
	}
	w := spellings[win]
	p.c.lines[canonical] = w.line
	p.c.written[canonical] = w.key
	p.raw[canonical] = strings.TrimSpace(w.value)
	if w.flag != "" {
		delete(p.c.lines, canonical)
	}
	for _, s := range spellings {
		if s.info.alias {
			p.note(s.leaf, fmt.Sprintf("%s (Flink's key) is read as %s", s.key, canonical))
		}
	}
	if canonical == KeyStateBackend {
		p.applyBackend(spellings, values, win)
		return
	}
	for _, s := range spellings {
		if s.info.deprecated {
			p.deprecate(s.leaf, fmt.Sprintf("%s is deprecated: use %s", s.key, p.flinkName(s, canonical)))
		}
	}
	if w.info.scope != scopeNone {
		p.setOption(w, values[win].(string))
		return
	}
	if w.info.plugin != "" { // plugins.checksums.<name>
		p.c.Plugins.Checksums[w.info.plugin] = values[win].(string)
		return
	}
	if strategy := restartStrategyOf(canonical); strategy != "" {
		p.restartKeys[strategy] = append(p.restartKeys[strategy], w)
	}
	p.set(canonical, values[win])
}

// rank orders the spellings of a setting: the current key wins over a Flink alias, which
// wins over a deprecated key.
func rank(i keyInfo) int {
	switch {
	case i.deprecated:
		return 2
	case i.alias:
		return 1
	}
	return 0
}

// flinkName is the key a deprecated spelling should become: the Flink alias for aliases of
// plugin options (state.backend.rocksdb.checkpointdir -> state.backend.rocksdb.localdir),
// else the current key.
func (p *parser) flinkName(s spelling, canonical string) string {
	if s.info.alias {
		if name, ok := flinkkeys.AliasOf(canonical); ok {
			return name
		}
	}
	return canonical
}

// applyBackend applies the spellings of state.backend.type.
func (p *parser) applyBackend(spellings []spelling, values []any, win int) {
	w := spellings[win]
	p.backend = &w
	for i := range spellings { // a deprecated value implies a storage whichever spelling has it
		if lb := values[i].(backendValue).legacy; lb != nil {
			p.backend, p.backendLegacy = &spellings[i], lb
			break
		}
	}
	for i, s := range spellings {
		if a := values[i].(backendValue).alias; a != "" && values[i].(backendValue).legacy == nil {
			p.note(s.leaf, fmt.Sprintf("%s: %s is Flowstate's %s plugin", s.key, a, values[i].(backendValue).name))
		}
	}
	p.backendAll = spellings
	p.c.StateBackend = values[win].(backendValue).name
	p.c.backendSrc = "config file"
	if w.flag != "" {
		p.c.backendSrc = "command line (" + w.flag + ")"
	}
}

// setOption records a plugin option.
func (p *parser) setOption(s spelling, v string) {
	opts := p.c.backendOpts
	if s.info.scope == scopeStorage {
		opts = p.c.storageOpts
	}
	if opts[s.info.plugin] == nil {
		opts[s.info.plugin] = map[string]optValue{}
	}
	opts[s.info.plugin][s.info.option] = optValue{value: v, key: s.key, line: s.line, flag: s.flag}
}

// deprecate records a deprecation message about a key.
func (p *parser) deprecate(l leaf, msg string) {
	p.deps = append(p.deps, message{l.line, p.at(l) + msg})
}

// note records a note about a key.
func (p *parser) note(l leaf, msg string) {
	p.notes = append(p.notes, message{l.line, p.at(l) + msg})
}

// at is how a message starts for a key: "FILE:LINE: " for the file, "-D " for a flag.
func (p *parser) at(l leaf) string {
	if l.flag != "" {
		return l.flag + " "
	}
	if l.line > 0 {
		return fmt.Sprintf("%s:%d: ", fileName(p.c.File), l.line)
	}
	return fileName(p.c.File) + ": "
}

// origin says where a key was set, inside a message: "line N" or "-D".
func (p *parser) origin(l leaf) string {
	if l.flag != "" {
		return l.flag
	}
	return fmt.Sprintf("line %d", l.line)
}

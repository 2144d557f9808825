package config

import (
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// spelling is one written key of a setting, with what it means.
type spelling struct {
	leaf
	info keyInfo
}

// deprecation is a deprecation message and the line it is about, for sorting.
type deprecation struct {
	line int
	msg  string
}

// parser holds the state of one Parse.
type parser struct {
	c    *Config
	errs errorList
	base string // directory relative paths resolve against
	deps []deprecation
	// backend is the winning spelling of state.backend.type and its legacy meaning.
	backend       *spelling
	backendLegacy *legacyBackend
	backendAll    []spelling
	storageGiven  bool
	restartGiven  bool
	attemptsGiven bool
	address, port string
}

// backendValue is a parsed state backend name; it prints as the plugin name so that
// "filesystem" and "hashmap" compare equal as backends.
type backendValue struct {
	name   string
	legacy *legacyBackend
}

func (b backendValue) String() string { return b.name }

// Parse parses and validates a configuration file's contents. file names the file in
// messages; relative paths in the file resolve against filepath.Dir(file). All problems are
// reported, in line order, each naming its key and line.
func Parse(data []byte, file string) (*Config, error) {
	doc, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	p := &parser{c: defaults(file), base: "."}
	if file != "" {
		p.base = filepath.Dir(file)
	}
	leaves := flatten(doc, file, &p.errs)
	groups, order := p.group(leaves)
	for _, canonical := range order {
		p.apply(canonical, groups[canonical])
	}
	p.finish()
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	c := p.c
	sort.SliceStable(p.deps, func(i, j int) bool { return p.deps[i].line < p.deps[j].line })
	for _, d := range p.deps {
		c.Deprecations = append(c.Deprecations, d.msg)
	}
	c.CheckpointStorage = c.configuredStorage()
	c.fillOptions()
	c.Warnings = append([]string{}, c.parseWarnings...)
	return c, nil
}

// group classifies the leaves and groups the spellings of each setting under its current
// key, in file order. Unknown and duplicate keys are reported.
func (p *parser) group(leaves []leaf) (map[string][]spelling, []string) {
	seen := map[string]int{}
	groups := map[string][]spelling{}
	var order []string
	for _, l := range leaves {
		if prev, dup := seen[l.key]; dup {
			p.errs.add(p.c.File, l.line, l.key, fmt.Errorf("%w: also set at line %d", ErrDuplicate, prev))
			continue
		}
		seen[l.key] = l.line
		info, ok := classify(l.key)
		if !ok {
			err := ErrUnknownKey
			if s := suggest(l.key); s != "" {
				err = fmt.Errorf("%w: did you mean %s?", ErrUnknownKey, s)
			}
			p.errs.add(p.c.File, l.line, l.key, err)
			continue
		}
		if _, ok := groups[info.canonical]; !ok {
			order = append(order, info.canonical)
		}
		groups[info.canonical] = append(groups[info.canonical], spelling{l, info})
		p.c.lines[l.key] = l.line
	}
	return groups, order
}

// value parses one written value of a setting.
func (p *parser) value(s spelling) (any, error) {
	raw := s.value
	if s.info.scope != scopeNone {
		if isPathOption(s.info.option) {
			return resolvePath(raw, p.base)
		}
		return strings.TrimSpace(raw), nil
	}
	def := s.info.def
	switch def.kind {
	case kindBackend:
		name, legacy, err := parseBackendName(raw)
		return backendValue{name, legacy}, err
	case kindStorage:
		return parseStorageName(raw)
	case kindPath:
		return resolvePath(raw, p.base)
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
		if err != nil {
			p.errs.add(p.c.File, s.line, s.key, fmt.Errorf("%w %q: %v", ErrBadValue, s.value, err))
			return
		}
		values[i] = v
	}
	win := 0
	for i, s := range spellings {
		if fmt.Sprint(values[i]) != fmt.Sprint(values[0]) {
			first := spellings[0]
			p.errs.add(p.c.File, s.line, s.key, fmt.Errorf("%w: %s: %s (line %d) and %s: %s (line %d) disagree; keep only %s",
				ErrConflict, first.key, strings.TrimSpace(first.value), first.line, s.key, strings.TrimSpace(s.value), s.line, canonical))
			return
		}
		if !s.info.deprecated && spellings[win].info.deprecated {
			win = i
		}
	}
	w := spellings[win]
	p.c.lines[canonical] = w.line
	p.c.written[canonical] = w.key
	if canonical == KeyStateBackend {
		p.backend = &w
		for i := range spellings { // a deprecated value implies a storage whichever spelling has it
			if lb := values[i].(backendValue).legacy; lb != nil {
				p.backend, p.backendLegacy = &spellings[i], lb
				break
			}
		}
		p.backendAll = spellings
		p.c.StateBackend = values[win].(backendValue).name
		p.c.backendSrc = "config file"
		return
	}
	for _, s := range spellings {
		if s.info.deprecated {
			p.deprecate(s.line, fmt.Sprintf("%s is deprecated: use %s", s.key, canonical))
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
	p.set(canonical, values[win])
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
	opts[s.info.plugin][s.info.option] = optValue{value: v, key: s.key, line: s.line}
}

// set applies the value of a current key.
func (p *parser) set(key string, v any) {
	c := p.c
	switch key {
	case KeyCheckpointStorage:
		c.storageSet, c.storageSrc, p.storageGiven = v.(string), "config file", true
	case KeyCheckpointDir:
		c.Checkpointing.Dir = v.(string)
	case KeySavepointDir:
		c.Checkpointing.SavepointDir = v.(string)
	case KeyInterval:
		c.Checkpointing.Interval = v.(time.Duration)
	case KeyTimeout:
		c.Checkpointing.Timeout = v.(time.Duration)
		if c.Checkpointing.Timeout == 0 {
			p.errs.add(c.File, c.lines[key], c.writtenKey(key), fmt.Errorf("%w \"0\": the checkpoint timeout must be positive", ErrBadValue))
		}
	case KeyNumRetained:
		c.Checkpointing.NumRetained = int(v.(int64))
	case KeyTolerableFailed:
		c.Checkpointing.TolerableFailed = int(v.(int64))
	case KeyIncremental:
		c.Checkpointing.Incremental, c.incrSet = v.(bool), true
	case KeyDataInlineThreshold:
		c.Checkpointing.DataInlineThreshold, c.inlineSet = v.(int64), true
	case KeySharedFilesystem:
		c.Checkpointing.SharedFilesystem = v.(bool)
	case KeyPluginsDir:
		c.Plugins.Dir = v.(string)
	case KeyJobName:
		c.Job.Name = v.(string)
	case KeyJobType:
		c.Job.Type = v.(string)
	case KeyJobParallelism:
		c.Job.Parallelism = int(v.(int64))
	case KeyJobMaxParallelism:
		c.Job.MaxParallelism = int(v.(int64))
	case KeyJobInput:
		c.Job.Input = v.(string)
	case KeyJobOutput:
		c.Job.Output = v.(string)
	case KeyJobRate:
		c.Job.Rate = v.(float64)
	case KeyJobKeys:
		c.Job.Keys = v.(int64)
	case KeyJobRecords:
		c.Job.Records = v.(int64)
	case KeyJobBatchSize:
		c.Job.BatchSize = int(v.(int64))
	case KeyLeaseTimeout:
		c.Job.LeaseTimeout = v.(time.Duration)
		if c.Job.LeaseTimeout < MinLeaseTimeout {
			p.errs.add(c.File, c.lines[key], c.writtenKey(key), fmt.Errorf("%w %q: the lease timeout must be at least %s", ErrBadValue, c.Job.LeaseTimeout, MinLeaseTimeout))
		}
	case KeyRestartType:
		c.Restart.Type, p.restartGiven = v.(string), true
	case KeyRestartAttempts:
		c.Restart.Attempts, p.attemptsGiven = int(v.(int64)), true
	case KeyRestartDelay:
		c.Restart.Delay = v.(time.Duration)
	case KeyStartOverOnLoss:
		c.Restart.StartOverOnCheckpointLoss = v.(bool)
	case KeyCancellationTimeout:
		c.Restart.CancellationTimeout = v.(time.Duration)
	case KeyRestAddress:
		p.address = v.(string)
	case KeyRestPort:
		p.port = strconv.FormatInt(v.(int64), 10)
	}
}

// finish applies the rules that involve several keys.
func (p *parser) finish() {
	c := p.c
	if c.Job.MaxParallelism < c.Job.Parallelism {
		key := KeyJobMaxParallelism
		if c.lines[key] == 0 {
			key = KeyJobParallelism
		}
		p.errs.add(c.File, c.lines[key], c.writtenKey(key), fmt.Errorf("%w: job.parallelism (%d) exceeds job.max-parallelism (%d)",
			ErrBadValue, c.Job.Parallelism, c.Job.MaxParallelism))
	}
	if c.Restart.Type == "none" {
		if p.attemptsGiven && c.Restart.Attempts > 0 {
			c.warnf("%s: %s is ignored: restart-strategy.type is none", c.where(KeyRestartAttempts), c.writtenKey(KeyRestartAttempts))
		}
		c.Restart.Attempts = 0
	}
	if p.address != "" || p.port != "" {
		host, port := DefaultRestAddress, strconv.Itoa(DefaultRestPort)
		if p.address != "" {
			host = p.address
		}
		if p.port != "" {
			port = p.port
		}
		c.Control.Address = net.JoinHostPort(host, port)
	}
	p.finishBackend()
}

// finishBackend applies the seed's Old -> New table to a deprecated state.backend value and
// writes the state backend's deprecation messages.
func (p *parser) finishBackend() {
	c := p.c
	for _, s := range p.backendAll {
		_, legacy, _ := parseBackendName(s.value)
		if legacy == nil {
			if s.info.deprecated {
				p.deprecate(s.line, fmt.Sprintf("%s is deprecated: use %s", s.key, KeyStateBackend))
			}
			continue
		}
		storage := legacy.storage
		if storage == storageAuto {
			storage = JMStorage
			if c.Checkpointing.Dir != "" {
				storage = FSStorage
			}
		}
		p.deprecate(s.line, fmt.Sprintf("%s: %s is deprecated: use %s: %s and %s: %s (%s)",
			s.key, strings.TrimSpace(s.value), KeyStateBackend, legacy.backend, KeyCheckpointStorage, storage, legacy.flink))
	}
	lb := p.backendLegacy
	if lb == nil {
		return
	}
	what := fmt.Sprintf("%s: %s", p.backend.key, strings.TrimSpace(p.backend.value))
	if p.storageGiven {
		// rocksdb never fixed its storage; jobmanager and filesystem did.
		if lb.storage != storageAuto && c.storageSet != lb.storage {
			c.warnf("%s: %s implies %s checkpoint storage, but %s (line %d) selects %s; using %s",
				c.where(KeyStateBackend), what, lb.storage, c.writtenKey(KeyCheckpointStorage), c.lines[KeyCheckpointStorage], c.storageSet, c.storageSet)
		}
		return
	}
	c.storageImpl = what
	c.storageSrc = "the deprecated " + what
	if lb.storage == storageAuto {
		c.storageAuto = true
	} else {
		c.storageSet = lb.storage
	}
}

// deprecate records a deprecation message about a line of the file.
func (p *parser) deprecate(line int, msg string) {
	loc := fileName(p.c.File)
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, line)
	}
	p.deps = append(p.deps, deprecation{line, loc + ": " + msg})
}

package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Migrate returns the same configuration in current keys. Each changed line carries a YAML
// comment saying what changed and why; unchanged keys, their order, nesting and comments stay
// as they were. A deprecated key inside a nested map moves to a flat dotted key beside the
// top-level entry that held it. Values implied by a deprecated value (the checkpoint storage
// of state.backend: filesystem, for example) are written out. The file must parse: Migrate
// returns Parse's error otherwise.
func Migrate(data []byte, file string) (string, error) {
	c, err := Parse(data, file)
	if err != nil {
		return "", err
	}
	doc, _, err := parseTree(data, file)
	if err != nil {
		return "", err
	}
	if doc == nil {
		return "", nil
	}
	var errs errorList
	leaves := flatten(doc, file, &errs)
	m := &migration{root: doc.Content[0], c: c}
	m.backendName = m.migratedBackend(leaves)
	for _, l := range leaves {
		info, _ := classify(l.key, nil)
		m.leaf(l, info, leaves)
	}
	if m.changes == 0 {
		return string(data), nil
	}
	for _, l := range m.remove {
		removePair(l)
	}
	doc.HeadComment = strings.TrimSpace(fmt.Sprintf("# Migrated to current keys by runner config migrate (%d changes).\n%s",
		m.changes, doc.HeadComment))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("%s: encode migrated configuration: %w", fileName(file), err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("%s: encode migrated configuration: %w", fileName(file), err)
	}
	return out.String(), nil
}

// migration is the state of one Migrate.
type migration struct {
	root    *yaml.Node
	c       *Config
	remove  []leaf
	changes int
	// backendName is the state backend as the migrated file names it ("" when unset).
	backendName string
}

// migratedBackend returns the state backend as the migrated file will name it: the plugin
// of a deprecated key or value, else the value as written, lower case.
func (m *migration) migratedBackend(all []leaf) string {
	l := m.keeper(all, KeyStateBackend)
	if l == nil {
		return ""
	}
	info, _ := classify(l.key, nil)
	if bv, err := parseBackendName(l.value, info.deprecated); err == nil && (info.deprecated || bv.legacy != nil) {
		return bv.name
	}
	return strings.ToLower(strings.TrimSpace(l.value))
}

// leaf migrates one key. Of several spellings of one setting the current key is kept (else
// the first); the others are removed, with a note on the one kept.
func (m *migration) leaf(l leaf, info keyInfo, all []leaf) {
	keeper := m.keeper(all, info.canonical)
	if keeper.keyNode != l.keyNode {
		m.note(keeper, fmt.Sprintf("%s: %s also set it (removed)", l.key, strings.TrimSpace(l.value)))
		m.remove = append(m.remove, l)
		m.changes++
		return
	}
	if info.canonical == KeyStateBackend {
		m.backend(l, info)
		return
	}
	if !info.deprecated {
		// Flink's names of leveldb's options (state.backend.rocksdb.localdir, ...) stay
		// beside Flink's name of the backend, and follow it when it becomes leveldb.
		if info.alias && info.scope == scopeBackend && m.backendName == LevelDB && strings.HasPrefix(l.key, backendOptionPrefix+"rocksdb.") {
			m.insertBefore(l, scalar(info.canonical), copyScalar(l.valNode, fmt.Sprintf("was %s (Flink's name of the option: rocksdb is leveldb here)", l.key)))
			m.remove = append(m.remove, l)
			m.changes++
		}
		return
	}
	why := "deprecated"
	if info.scope == scopeBackend {
		why = "deprecated: rocksdb is leveldb here"
	}
	m.insertBefore(l, scalar(info.canonical), copyScalar(l.valNode, fmt.Sprintf("was %s (%s)", l.key, why)))
	m.remove = append(m.remove, l)
	m.changes++
}

// backend migrates the kept spelling of the state backend: the key to state.backend.type,
// a deprecated value to its plugin, and the storage a deprecated value implied.
func (m *migration) backend(l leaf, info keyInfo) {
	bv, _ := parseBackendName(l.value, info.deprecated)
	name, legacy := bv.name, bv.legacy
	what := fmt.Sprintf("%s: %s", l.key, strings.TrimSpace(l.value))
	comment := fmt.Sprintf("was %s (deprecated)", what)
	if legacy != nil {
		comment = fmt.Sprintf("was %s (%s)", what, legacy.flink)
	}
	switch {
	case info.deprecated:
		m.insertBefore(l, scalar(KeyStateBackend), valueScalar(l.valNode, name, comment))
		m.remove = append(m.remove, l)
		m.changes++
	case legacy != nil:
		l.valNode.Value, l.valNode.Style = name, 0
		m.note(&l, comment)
		m.changes++
	}
	if m.c.storageImpl == "" || m.c.configuredStorage() == "" {
		return
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Value: m.c.configuredStorage(), LineComment: "# implied by the old " + m.c.storageImpl}
	i := m.topIndex(l) // before the entry holding l: after what insertBefore put there
	if l.top == l.keyNode && !info.deprecated {
		i += 2 // after l itself, changed in place
	}
	m.root.Content = slices.Insert(m.root.Content, min(i, len(m.root.Content)), scalar(KeyCheckpointStorage), v)
	m.changes++
}

// keeper returns the leaf of a setting that stays: its current spelling, else the first.
func (m *migration) keeper(all []leaf, canonical string) *leaf {
	var first *leaf
	for i := range all {
		info, ok := classify(all[i].key, nil)
		if !ok || info.canonical != canonical {
			continue
		}
		if !info.deprecated {
			return &all[i]
		}
		if first == nil {
			first = &all[i]
		}
	}
	return first
}

// note appends a comment to a leaf's line.
func (m *migration) note(l *leaf, text string) {
	if l.valNode.LineComment != "" {
		l.valNode.LineComment += "; " + text
		return
	}
	l.valNode.LineComment = "# " + text
}

// topIndex is the index in the root mapping of the key node of l's top-level entry.
func (m *migration) topIndex(l leaf) int {
	for i := 0; i < len(m.root.Content); i += 2 {
		if m.root.Content[i] == l.top {
			return i
		}
	}
	return len(m.root.Content)
}

// insertBefore puts a flat key/value pair at the root, just before l's top-level entry.
func (m *migration) insertBefore(l leaf, k, v *yaml.Node) {
	if l.top == l.keyNode {
		k.HeadComment, k.FootComment = l.keyNode.HeadComment, l.keyNode.FootComment
	}
	i := m.topIndex(l)
	m.root.Content = slices.Insert(m.root.Content, i, k, v)
}

// removePair deletes a leaf's key and value from its mapping, and mappings left empty from
// theirs.
func removePair(l leaf) {
	target := l.keyNode
	for d := len(l.parents) - 1; d >= 0; d-- {
		parent := l.parents[d]
		for i := 0; i+1 < len(parent.Content); i += 2 {
			if parent.Content[i] == target {
				parent.Content = slices.Delete(parent.Content, i, i+2)
				break
			}
		}
		if len(parent.Content) > 0 || d == 0 {
			return
		}
		// parent is now empty: remove its own entry from the level above.
		grand := l.parents[d-1]
		target = nil
		for i := 1; i < len(grand.Content); i += 2 {
			if grand.Content[i] == parent {
				target = grand.Content[i-1]
			}
		}
		if target == nil {
			return
		}
	}
}

// scalar makes a plain string node.
func scalar(value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
}

// copyScalar copies a value node and puts comment before its line comment.
func copyScalar(v *yaml.Node, comment string) *yaml.Node {
	n := *v
	n.LineComment = "# " + comment
	if old := strings.TrimSpace(strings.TrimPrefix(v.LineComment, "#")); old != "" {
		n.LineComment += "; " + old
	}
	n.HeadComment, n.FootComment = "", ""
	return &n
}

// valueScalar is a new value node for a mapped value.
func valueScalar(v *yaml.Node, value, comment string) *yaml.Node {
	n := copyScalar(v, comment)
	n.Value, n.Style = value, 0
	return n
}

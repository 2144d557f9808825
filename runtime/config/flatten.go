package config

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// leaf is one key with a scalar value, found by walking the YAML tree.
type leaf struct {
	// key is the full dotted key as written (nested map keys joined with ".").
	key     string
	value   string
	line    int
	keyNode *yaml.Node
	valNode *yaml.Node
	// parents are the mapping nodes from the root mapping down to the one holding keyNode.
	parents []*yaml.Node
	// top is the key node of the root mapping entry this leaf is in.
	top *yaml.Node
	// flag is the command-line flag that set the key ("-D", "-p"); "" for keys of the file.
	flag string
	// shape is what the value is when it is not a single value: shapeList (a YAML list,
	// value holds its items joined with ";", as Flink writes lists) or shapeNull (no
	// value). Only keys Flowstate ignores may have them.
	shape string
}

// Value shapes Flowstate refuses for the keys it reads.
const (
	shapeList = "list"
	shapeNull = "null"
)

// shapeError says why a list or a missing value is refused, "" when the value is single.
func (l leaf) shapeError() string {
	switch l.shape {
	case shapeList:
		return "a list is not allowed here, give a single value"
	case shapeNull:
		return "no value (give one or remove the key)"
	}
	return ""
}

// parseTree parses YAML into its root mapping node (nil for an empty document). A file that
// is not valid YAML but reads as Flink 1.x's flat "key: value" lines (Flink 1.x read
// flink-conf.yaml line by line, not as YAML) is read that way; flat reports it.
func parseTree(data []byte, file string) (doc *yaml.Node, flat bool, err error) {
	if i := invalidUTF8(data); i >= 0 {
		return nil, false, fmt.Errorf("%s:%d: byte %#x at offset %d is not UTF-8: a configuration file is UTF-8 text",
			fileName(file), 1+bytes.Count(data[:i], []byte("\n")), data[i], i)
	}
	var d yaml.Node
	if err := yaml.Unmarshal(data, &d); err != nil {
		if doc, ok := flatLines(data); ok {
			return doc, true, nil
		}
		return nil, false, fmt.Errorf("%s: %w", fileName(file), err)
	}
	if d.Kind == 0 || len(d.Content) == 0 {
		return nil, false, nil
	}
	root := d.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, false, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, false, fmt.Errorf("%s:%d: the file must be a map of keys to values", fileName(file), root.Line)
	}
	return &d, false, nil
}

// flatLines reads data as Flink 1.x's GlobalConfiguration read flink-conf.yaml: line by
// line, "#" starts a comment, and each other line is "key: value", split at the first
// ": ". It reports false unless every line that is not blank or a comment has that shape
// and starts in the first column, and no value opens a YAML flow collection ("[", "{"): a
// YAML file that fails to parse keeps its error.
func flatLines(data []byte) (*yaml.Node, bool) {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i, line := range strings.Split(string(data), "\n") {
		conf, _, _ := strings.Cut(line, "#")
		if strings.TrimSpace(conf) == "" {
			continue
		}
		if conf[0] == ' ' || conf[0] == '\t' {
			return nil, false
		}
		k, v, ok := strings.Cut(strings.TrimSpace(conf), ": ")
		v = strings.TrimSpace(v)
		if !ok || strings.TrimSpace(k) == "" || v == "" || v[0] == '[' || v[0] == '{' {
			return nil, false
		}
		root.Content = append(root.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(k), Line: i + 1, Column: 1},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(v), Line: i + 1})
	}
	if len(root.Content) == 0 {
		return nil, false
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}, true
}

// flatten walks a parsed document and returns its leaves in file order; problems that make a
// key unusable are added to errs.
func flatten(doc *yaml.Node, file string, errs *errorList) []leaf {
	if doc == nil {
		return nil
	}
	var leaves []leaf
	var walk func(m *yaml.Node, prefix string, parents []*yaml.Node, top *yaml.Node)
	walk = func(m *yaml.Node, prefix string, parents []*yaml.Node, top *yaml.Node) {
		parents = append(parents[:len(parents):len(parents)], m)
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if top == nil || len(parents) == 1 {
				top = k
			}
			name := strings.TrimSpace(k.Value)
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			switch {
			case k.Kind != yaml.ScalarNode || name == "":
				errs.add(file, k.Line, prefix+".?", fmt.Errorf("%w: keys must be non-empty strings", ErrBadValue))
			case name == "<<":
				errs.add(file, k.Line, key, fmt.Errorf("%w: YAML merge keys are not supported", ErrBadValue))
			case v.Kind == yaml.MappingNode:
				walk(v, key, parents, top)
			case v.Kind == yaml.SequenceNode:
				leaves = append(leaves, leaf{key: key, value: listText(v), line: k.Line, keyNode: k, valNode: v, parents: parents, top: top, shape: shapeList})
			case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
				leaves = append(leaves, leaf{key: key, line: k.Line, keyNode: k, valNode: v, parents: parents, top: top, shape: shapeNull})
			default:
				leaves = append(leaves, leaf{key: key, value: v.Value, line: k.Line, keyNode: k, valNode: v, parents: parents, top: top})
			}
		}
	}
	walk(doc.Content[0], "", nil, nil)
	return leaves
}

// listText joins the scalar items of a YAML list with ";", the separator of Flink's list
// values.
func listText(v *yaml.Node) string {
	items := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		if it.Kind == yaml.AliasNode && it.Alias != nil {
			it = it.Alias
		}
		items = append(items, it.Value)
	}
	return strings.Join(items, ";")
}

// fileName is how messages name a file.
func fileName(file string) string {
	if file == "" {
		return "config"
	}
	return file
}

// invalidUTF8 returns the offset of the first byte of data that is not part of valid UTF-8,
// or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

package config

import (
	"fmt"
	"strings"

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
}

// parseTree parses YAML into its root mapping node (nil for an empty document).
func parseTree(data []byte, file string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", fileName(file), err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the file must be a map of keys to values", fileName(file), root.Line)
	}
	return &doc, nil
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
				errs.add(file, k.Line, key, fmt.Errorf("%w: a list is not allowed here, give a single value", ErrBadValue))
			case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
				errs.add(file, k.Line, key, fmt.Errorf("%w: no value (give one or remove the key)", ErrBadValue))
			default:
				leaves = append(leaves, leaf{key: key, value: v.Value, line: k.Line, keyNode: k, valNode: v, parents: parents, top: top})
			}
		}
	}
	walk(doc.Content[0], "", nil, nil)
	return leaves
}

// fileName is how messages name a file.
func fileName(file string) string {
	if file == "" {
		return "config"
	}
	return file
}

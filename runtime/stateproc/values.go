package stateproc

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// DecodeValue decodes a keyed state value by the state's recorded type (the StateType of
// runtime/state's descriptors): "value[C]", "list[C]" or "map[K,V]" over the built-in
// codecs state.Int64 (a JSON number), state.String (a JSON string, when valid UTF-8) and
// state.JSON (the JSON itself, when valid). A list becomes a JSON array, a map a JSON array
// of {"key": K, "value": V} in stored order. It returns false for anything else (other
// codecs, state.Bytes, bytes that do not decode): the caller shows those bytes as they are.
func DecodeValue(stateType string, b []byte) (json.RawMessage, bool) {
	switch {
	case strings.HasPrefix(stateType, "value[") && strings.HasSuffix(stateType, "]"):
		return decodeCodec(stateType[len("value["):len(stateType)-1], b)
	case strings.HasPrefix(stateType, "list[") && strings.HasSuffix(stateType, "]"):
		return decodeList(stateType[len("list["):len(stateType)-1], b)
	case strings.HasPrefix(stateType, "map[") && strings.HasSuffix(stateType, "]"):
		k, v, ok := splitTopLevel(stateType[len("map[") : len(stateType)-1])
		if !ok {
			return nil, false
		}
		return decodeMap(k, v, b)
	}
	return nil, false
}

// decodeCodec decodes one value encoded by the codec whose Go type name is codec.
func decodeCodec(codec string, b []byte) (json.RawMessage, bool) {
	switch {
	case codec == "state.int64Codec":
		v, n := binary.Varint(b)
		if n <= 0 || n != len(b) {
			return nil, false
		}
		return marshal(v)
	case codec == "state.stringCodec":
		if !utf8.Valid(b) {
			return nil, false
		}
		return marshal(string(b))
	case strings.HasPrefix(codec, "state.jsonCodec["):
		if !json.Valid(b) {
			return nil, false
		}
		return json.RawMessage(append([]byte(nil), b...)), true
	}
	return nil, false
}

// decodeList decodes the elements of a list state: each a uvarint length and the element.
func decodeList(codec string, b []byte) (json.RawMessage, bool) {
	out := []json.RawMessage{}
	for len(b) > 0 {
		elem, rest, ok := chunk(b)
		if !ok {
			return nil, false
		}
		v, ok := decodeCodec(codec, elem)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		b = rest
	}
	return marshal(out)
}

// decodeMap decodes the entries of a map state: key and value chunks, alternating.
func decodeMap(keyCodec, valueCodec string, b []byte) (json.RawMessage, bool) {
	type pair struct {
		Key   json.RawMessage `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	out := []pair{}
	for len(b) > 0 {
		kb, rest, ok := chunk(b)
		if !ok {
			return nil, false
		}
		vb, rest, ok := chunk(rest)
		if !ok {
			return nil, false
		}
		k, ok := decodeCodec(keyCodec, kb)
		if !ok {
			return nil, false
		}
		v, ok := decodeCodec(valueCodec, vb)
		if !ok {
			return nil, false
		}
		out = append(out, pair{k, v})
		b = rest
	}
	return marshal(out)
}

// chunk splits a uvarint-length-prefixed chunk off b.
func chunk(b []byte) (c, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

// splitTopLevel splits "K,V" at its one comma outside brackets.
func splitTopLevel(s string) (k, v string, ok bool) {
	depth, at := 0, -1
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				if at >= 0 {
					return "", "", false
				}
				at = i
			}
		}
	}
	if at < 0 {
		return "", "", false
	}
	return s[:at], s[at+1:], true
}

func marshal(v any) (json.RawMessage, bool) {
	b, err := json.Marshal(v)
	return b, err == nil
}

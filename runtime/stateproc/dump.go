package stateproc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// Encodings of keys and values in a DumpLine.
const (
	// EncodingUTF8: the bytes are valid UTF-8 and shown as a JSON string.
	EncodingUTF8 = "utf-8"
	// EncodingBase64: the bytes are shown base64-encoded (standard, padded).
	EncodingBase64 = "base64"
	// EncodingDecoded: the value was decoded by its state type into JSON.
	EncodingDecoded = "decoded"
)

// DumpLine is one keyed state entry as Dump writes it, one JSON object a line.
type DumpLine struct {
	KeyGroup int    `json:"key_group"`
	Key      string `json:"key"`
	// KeyEncoding is EncodingUTF8 or EncodingBase64.
	KeyEncoding string `json:"key_encoding"`
	State       string `json:"state"`
	// Type is the state's recorded type; "" when the metadata records none.
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
	// ValueEncoding is EncodingDecoded (see DecodeValue) or EncodingBase64.
	ValueEncoding string `json:"value_encoding"`
}

// Dump writes the keyed state entries of operator opID as JSON lines (DumpLine), only
// those of state stateName unless it is "". It returns the number of lines written. An
// unknown operator is an error listing the operators, an operator without keyed state one
// listing those with keyed state, and a state the operator does not declare one listing
// its states (metadata that records no states is not checked). Every state stream of the
// operator is read back and checked (sizes and CRC-32C) before anything is written: a
// damaged one fails Dump, naming it, with nothing written.
func (c *Checkpoint) Dump(ctx context.Context, w io.Writer, opID, stateName string) (int64, error) {
	op, err := c.Operator(opID)
	if err != nil {
		return 0, err
	}
	if !hasKeyedState(op) {
		var keyed []string
		for i := range c.Metadata.Operators {
			if hasKeyedState(&c.Metadata.Operators[i]) {
				keyed = append(keyed, c.Metadata.Operators[i].ID)
			}
		}
		return 0, fmt.Errorf("%s: operator %q keeps no keyed state; operators with keyed state: %s", c, opID, quoteList(keyed))
	}
	types := stateTypes(op)
	if _, ok := types[stateName]; stateName != "" && !ok && len(op.States) > 0 {
		var names []string
		for _, s := range op.States {
			names = append(names, s.Name)
		}
		return 0, fmt.Errorf("%s: operator %q has no state %q; its states: %s", c, opID, stateName, quoteList(names))
	}
	// A stream's checksum is known only once it has been read to its end: check them all
	// first, so that no entry of a damaged checkpoint is printed.
	err = c.checkStreams(ctx, op, func(sc StreamCheck) error {
		if sc.Err != nil {
			return fmt.Errorf("%s: operator %q subtask %d: state stream %s is damaged, so nothing is printed: %w", c, op.ID, sc.Subtask, sc.Name, sc.Err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	enc := json.NewEncoder(w)
	var n int64
	err = c.Entries(ctx, op, func(e Entry) error {
		if stateName != "" && e.State != stateName {
			return nil
		}
		line := DumpLine{KeyGroup: e.KeyGroup, State: e.State, Type: types[e.State]}
		if utf8.Valid(e.Key) {
			line.Key, line.KeyEncoding = string(e.Key), EncodingUTF8
		} else {
			line.Key, line.KeyEncoding = base64.StdEncoding.EncodeToString(e.Key), EncodingBase64
		}
		if v, ok := DecodeValue(line.Type, e.Value); ok {
			line.Value, line.ValueEncoding = v, EncodingDecoded
		} else {
			line.Value, _ = json.Marshal(e.Value) // encoding/json writes []byte as base64
			line.ValueEncoding = EncodingBase64
		}
		n++
		return enc.Encode(line)
	})
	return n, err
}

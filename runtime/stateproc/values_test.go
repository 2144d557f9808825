package stateproc_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// point is a JSON-encoded state value.
type point struct {
	X, Y int
}

// upperCodec is a codec DecodeValue does not know.
type upperCodec struct{}

func (upperCodec) Encode(dst []byte, v string) []byte { return append(dst, v...) }
func (upperCodec) Decode(b []byte) (string, error)    { return string(b), nil }

// TestDecodeValue writes values of every kind of state through runtime/state's Store into
// a keyed backend, reads the raw bytes back, and checks that DecodeValue turns them into
// the JSON of the values written, by the types the descriptors report; values it cannot
// decode are refused.
func TestDecodeValue(t *testing.T) {
	i64 := state.NewValue("i64", state.Int64)
	str := state.NewValue("str", state.String)
	raw := state.NewValue("raw", state.Bytes)
	js := state.NewValue("json", state.JSON[point]())
	list := state.NewList("list", state.Int64)
	strs := state.NewList("strs", state.String)
	m := state.NewMap("map", state.String, state.Int64)
	mj := state.NewMap("mapjson", state.Int64, state.JSON[[]string]())
	custom := state.NewValue("custom", upperCodec{})
	descs := []state.Descriptor{i64, str, raw, js, list, strs, m, mj, custom}

	hm := hashmap.New()
	if err := hm.Configure(bg, nil); err != nil {
		t.Fatal(err)
	}
	p := sdktest.Params("op", 0, 1)
	kb := sdktest.OpenKeyed(t, hm, p)
	s, err := state.NewStore(kb, 128, descs)
	if err != nil {
		t.Fatal(err)
	}
	err = s.ProcessBatch(bg, [][]byte{[]byte("k")}, nil, func(int) error {
		for _, err := range []error{
			i64.Update(s, -1234567), str.Update(s, "héllo"), raw.Update(s, []byte{0, 0xff}), js.Update(s, point{3, -4}),
			list.Update(s, []int64{5, -6, 7}), strs.Update(s, []string{"a", ""}), m.Put(s, "x", 9), mj.Put(s, 2, []string{"p", "q"}),
			custom.Update(s, "up"),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	kvs, err := kb.Scan(bg, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]byte{}
	for _, kv := range kvs {
		_, name, _, err := state.SplitStateKey(kv.Key)
		if err != nil {
			t.Fatal(err)
		}
		values[name] = kv.Value
	}
	want := map[string]any{
		"i64": -1234567, "str": "héllo", "json": map[string]any{"X": 3, "Y": -4},
		"list": []any{5, -6, 7}, "strs": []any{"a", ""},
		"map":     []any{map[string]any{"key": "x", "value": 9}},
		"mapjson": []any{map[string]any{"key": 2, "value": []any{"p", "q"}}},
	}
	for _, d := range descs {
		got, ok := stateproc.DecodeValue(d.StateType(), values[d.StateName()])
		w, decodable := want[d.StateName()]
		if ok != decodable {
			t.Fatalf("state %s of type %s: decoded %v (%s), want decoded %v", d.StateName(), d.StateType(), ok, got, decodable)
		}
		if !ok {
			continue
		}
		if !sameJSON(t, got, w) {
			t.Fatalf("state %s of type %s: decoded %s, want %v", d.StateName(), d.StateType(), got, w)
		}
	}
	for typ, b := range map[string][]byte{
		i64.StateType():  {0x80},       // a varint cut short
		str.StateType():  {0xff, 0xfe}, // not UTF-8
		js.StateType():   []byte("{"),
		list.StateType(): {5, 1},   // an element longer than the value
		m.StateType():    {1, 'x'}, // a key without its value
		"value[":         {1},
	} {
		if got, ok := stateproc.DecodeValue(typ, b); ok {
			t.Errorf("DecodeValue(%s, %x) = %s, want a refusal", typ, b, got)
		}
	}
}

// sameJSON reports whether got is the JSON of want.
func sameJSON(t *testing.T, got json.RawMessage, want any) bool {
	t.Helper()
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var w any
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}

//go:build !wasip1

package adkhost

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type Base struct {
	ID    string `json:"id" jsonschema:"the id"`
	Shade string `json:"shade,omitempty"`
}

type Other struct {
	Shade int    `json:"shade"` // conflicts with Base.shade at the same depth: dropped
	Note  string `json:"note,omitempty"`
}

type stamp struct{ t time.Time }

func (s stamp) MarshalText() ([]byte, error) { return []byte(s.t.String()), nil }

type Everything struct {
	Base
	*Other
	Name     string            `json:"name" jsonschema:"who, e.g. Ada"`
	Count    int               `json:"count,omitempty"`
	Ratio    float32           `json:"ratio,omitzero"`
	OK       bool              `json:"ok"`
	Tags     []string          `json:"tags,omitempty"`
	Grid     [2][]uint8        `json:"grid"`
	Blob     []byte            `json:"blob,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Extra    map[string]any    `json:"extra,omitempty"`
	Any      any               `json:"any,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	When     time.Time         `json:"when"`
	Stamp    stamp             `json:"stamp"`
	Quoted   int64             `json:"quoted,string"`
	Ptr      *struct{ X int }  `json:"ptr,omitempty"`
	NoTag    string
	Skipped  string `json:"-"`
	private  string
	Children []Leaf `json:"children,omitempty"`
}

type Leaf struct {
	V int `json:"v"`
}

func TestSchemaFor(t *testing.T) {
	got, err := SchemaFor[Everything]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"id":{"type":"string","description":"the id"},` +
		`"note":{"type":"string"},` + // promoted fields keep encoding/json's order
		`"name":{"type":"string","description":"who, e.g. Ada"},` +
		`"count":{"type":"integer"},` +
		`"ratio":{"type":"number"},` +
		`"ok":{"type":"boolean"},` +
		`"tags":{"type":"array","items":{"type":"string"}},` +
		`"grid":{"type":"array","items":{"type":"string"}},` +
		`"blob":{"type":"string"},` +
		`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"extra":{"type":"object"},` +
		`"any":{},` +
		`"raw":{},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"stamp":{"type":"string"},` +
		`"quoted":{"type":"string"},` +
		`"ptr":{"type":"object","properties":{"X":{"type":"integer"}},"required":["X"]},` +
		`"NoTag":{"type":"string"},` +
		`"children":{"type":"array","items":{"type":"object","properties":{"v":{"type":"integer"}},"required":["v"]}}},` +
		`"required":["id","name","ok","grid","when","stamp","quoted","NoTag"]}`
	if string(got) != want {
		t.Errorf("SchemaFor[Everything]:\n got %s\nwant %s", got, want)
	}
	_ = Everything{}.private
}

func TestArgsSchema(t *testing.T) {
	type empty struct{}
	type one struct {
		A string `json:"a"`
	}
	for _, c := range []struct {
		name     string
		typ      reflect.Type
		want     string
		required []string
		err      string
	}{
		{name: "empty struct: no parameters", typ: reflect.TypeFor[empty](), want: ""},
		{name: "pointer", typ: reflect.TypeFor[*one](), want: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, required: []string{"a"}},
		{name: "map", typ: reflect.TypeFor[map[string]any](), want: `{"type":"object"}`},
		{name: "typed map", typ: reflect.TypeFor[map[string]int](), want: `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{name: "any", typ: reflect.TypeFor[any](), want: `{"type":"object"}`},
		{name: "string", typ: reflect.TypeFor[string](), err: "tool arguments must be a struct, a map or an interface, not string"},
		{name: "slice", typ: reflect.TypeFor[[]int](), err: "tool arguments must be a struct"},
		{name: "int-keyed map", typ: reflect.TypeFor[map[int]string](), err: "map with string keys"},
		{name: "channel field", typ: reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), err: "has no JSON Schema"},
		{name: "recursive", typ: reflect.TypeFor[node](), err: "is recursive"},
		{name: "reserved tag form", typ: reflect.TypeFor[struct {
			A string `json:"a" jsonschema:"description=the a"`
		}](), err: "the WORD= form is reserved"},
		{name: "description with =", typ: reflect.TypeFor[struct {
			A string `json:"a" jsonschema:"x = y, or 2=3 kinds"`
		}](), want: `{"type":"object","properties":{"a":{"type":"string","description":"x = y, or 2=3 kinds"}},"required":["a"]}`, required: []string{"a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, req, err := argsSchema(c.typ)
			var got []byte
			if err == nil && s != nil {
				got, err = json.Marshal(s)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want || !reflect.DeepEqual(req, c.required) {
				t.Errorf("got %s %q, want %s %q", got, req, c.want, c.required)
			}
		})
	}
}

type node struct {
	Next *node `json:"next,omitempty"`
}

// Field resolution follows encoding/json: the schema's properties are the
// keys encoding/json writes, in its order.
func TestSchemaMatchesEncodingJSON(t *testing.T) {
	type Inner struct {
		A, B string
		C    string `json:"c"`
	}
	type Tagged struct {
		B string `json:"B"`
	}
	type Outer struct {
		Inner
		Tagged
		A string
	}
	full := Everything{
		Base: Base{Shade: "x"}, Other: &Other{Note: "n"}, Count: 1, Ratio: 1, Tags: []string{"t"},
		Blob: []byte{1}, Labels: map[string]string{"a": "b"}, Extra: map[string]any{"a": 1}, Any: 1,
		Raw: json.RawMessage("1"), Ptr: &struct{ X int }{}, Children: []Leaf{{}},
	}
	for _, v := range []any{Outer{}, full} {
		s, err := deriveSchema(reflect.TypeOf(v))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.Token() // {
		var keys []string
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		if !reflect.DeepEqual(s.Properties.names, keys) {
			t.Errorf("%T: schema properties %q, encoding/json keys %q", v, s.Properties.names, keys)
		}
	}
}

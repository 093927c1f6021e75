package adkhost

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Schemas are derived from Go types with the conventions of
// github.com/google/jsonschema-go, which adk-go's functiontool uses, so an
// adk-go args struct gives the same parameters here:
//
//   - a property is named by the field's json tag (or the field name);
//     fields tagged json:"-" and unexported fields are left out, and
//     embedded structs are flattened as encoding/json flattens them;
//   - a property is required unless its json tag says omitempty or omitzero;
//   - the jsonschema tag is the property's description:
//     `jsonschema:"the city, e.g. Paris"`. A tag starting with WORD= is
//     refused: that form is reserved, as in jsonschema-go;
//   - string → "string"; bool → "boolean"; integers → "integer"; floats →
//     "number"; slices and arrays → "array" with "items" ([]byte is a base64
//     "string"); maps → "object" with "additionalProperties"; structs →
//     "object"; a pointer is the schema of what it points to; interfaces,
//     json.RawMessage and other json.Marshalers → {} (any value);
//     time.Time → "string" with format "date-time"; an
//     encoding.TextMarshaler → "string"; json:",string" → "string".
//   - Subschemas are inlined (no $ref), so recursive types are refused, as
//     are channels, functions and complex numbers.
//
// Properties keep the declaration order of the fields.

// schema is the small subset of JSON Schema the SDK writes.
type schema struct {
	Type                 string      `json:"type,omitempty"`
	Format               string      `json:"format,omitempty"`
	Description          string      `json:"description,omitempty"`
	Properties           *properties `json:"properties,omitempty"`
	Required             []string    `json:"required,omitempty"`
	Items                *schema     `json:"items,omitempty"`
	AdditionalProperties *schema     `json:"additionalProperties,omitempty"`
}

// isAny reports whether s is {}, which allows any value.
func (s *schema) isAny() bool {
	return s.Type == "" && s.Format == "" && s.Description == "" && s.Properties == nil &&
		s.Required == nil && s.Items == nil && s.AdditionalProperties == nil
}

// properties keeps its entries in declaration order when encoded.
type properties struct {
	names   []string
	schemas []*schema
}

func (p *properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range p.names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.schemas[i])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// SchemaFor returns the JSON Schema the SDK derives from T, as Tool does for
// a tool's arguments. See the package documentation for the rules.
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := deriveSchema(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// argsSchema derives the parameters of a tool whose arguments decode into
// t: nil for a struct without properties (a tool without parameters), and
// the names of the required properties. It returns the schema unencoded:
// Tool derives it when it registers the tool, so a type it cannot
// describe fails there, and describe encodes it. A new instance of a
// module whose describe message the host has cached never sends it, and
// the encoding (with encoding/json's first look at the schema's types)
// was most of the registration's cost at every instance's start.
func argsSchema(t reflect.Type) (*schema, []string, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch base.Kind() {
	case reflect.Struct, reflect.Map, reflect.Interface:
	default:
		return nil, nil, fmt.Errorf("tool arguments must be a struct, a map or an interface, not %s", t)
	}
	if base.Kind() == reflect.Map && base.Key().Kind() != reflect.String {
		return nil, nil, fmt.Errorf("tool arguments must be a map with string keys, not %s", t)
	}
	s, err := deriveSchema(t)
	if err != nil {
		return nil, nil, err
	}
	if s.Type == "" {
		s.Type = "object" // an interface: any object
	}
	if s.Type == "object" && base.Kind() == reflect.Struct && (s.Properties == nil || len(s.Properties.names) == 0) {
		return nil, nil, nil
	}
	return s, s.Required, nil
}

func deriveSchema(t reflect.Type) (*schema, error) {
	return (&deriver{visiting: map[reflect.Type]bool{}}).schema(t)
}

type deriver struct {
	visiting map[reflect.Type]bool
}

func (d *deriver) schema(t reflect.Type) (*schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case isTime(t):
		return &schema{Type: "string", Format: "date-time"}, nil
	case t == rawMessageType:
		return &schema{}, nil
	case t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType):
		return &schema{}, nil
	case t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		return &schema{Type: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &schema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}, nil
	case reflect.String:
		return &schema{Type: "string"}, nil
	case reflect.Interface:
		return &schema{}, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 &&
			!t.Elem().Implements(jsonMarshalerType) && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			return &schema{Type: "string"}, nil // base64, as encoding/json writes []byte
		}
		items, err := d.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema{Type: "array", Items: items}, nil
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, k.Implements(textMarshalerType):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, fmt.Errorf("map key type %s cannot be a JSON object key", k)
		}
		v, err := d.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &schema{Type: "object"}
		if !v.isAny() {
			s.AdditionalProperties = v
		}
		return s, nil
	case reflect.Struct:
		return d.object(t)
	}
	return nil, fmt.Errorf("type %s has no JSON Schema", t)
}

func (d *deriver) object(t reflect.Type) (*schema, error) {
	if d.visiting[t] {
		return nil, fmt.Errorf("type %s is recursive; give the tool a schema with WithParameters", t)
	}
	d.visiting[t] = true
	defer delete(d.visiting, t)
	s := &schema{Type: "object", Properties: &properties{}}
	for _, f := range jsonFields(t) {
		if f.err != nil {
			return nil, f.err
		}
		fs, err := d.schema(f.typ)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t, f.goName, err)
		}
		if f.quoted {
			switch fs.Type {
			case "boolean", "integer", "number", "string":
				fs = &schema{Type: "string"}
			}
		}
		if f.description != "" {
			c := *fs
			c.Description = f.description
			fs = &c
		}
		s.Properties.names = append(s.Properties.names, f.name)
		s.Properties.schemas = append(s.Properties.schemas, fs)
		if f.required {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// field is one property of a struct as encoding/json sees it.
type field struct {
	name, goName string
	typ          reflect.Type
	index        []int
	tagged       bool // named by its json tag
	required     bool
	quoted       bool // json:",string"
	description  string
	err          error
}

// jsonFields lists the fields encoding/json encodes for struct type t, in
// declaration order, flattening embedded structs and resolving name
// conflicts with encoding/json's rules: the shallowest field wins; among
// several at that depth, the one named by a json tag wins; otherwise the
// name is dropped.
func jsonFields(t reflect.Type) []field {
	type level struct {
		typ   reflect.Type
		index []int
	}
	var out []field
	decided := map[string]bool{} // names taken or dropped at a shallower depth
	visited := map[reflect.Type]bool{}
	for next := []level{{typ: t}}; len(next) > 0; {
		current := next
		next = nil
		var found []field
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := 0; i < l.typ.NumField(); i++ {
				sf := l.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(append([]int(nil), l.index...), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{typ: ft, index: index})
					continue
				}
				f := field{name: name, goName: sf.Name, typ: sf.Type, index: index, tagged: name != "", required: true}
				if name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.required = false
					case "string":
						f.quoted = true
					}
				}
				if desc, ok := sf.Tag.Lookup("jsonschema"); ok {
					if w, _, eq := strings.Cut(desc, "="); eq && isWord(w) {
						f.err = fmt.Errorf("field %s.%s: jsonschema tag %q: the WORD= form is reserved; the whole tag is the description", l.typ, sf.Name, desc)
					}
					f.description = desc
				}
				found = append(found, f)
			}
		}
		for _, f := range found {
			if decided[f.name] {
				continue
			}
			decided[f.name] = true
			var same, tagged []field
			for _, g := range found {
				if g.name == f.name {
					same = append(same, g)
					if g.tagged {
						tagged = append(tagged, g)
					}
				}
			}
			switch {
			case len(same) == 1:
				out = append(out, f)
			case len(tagged) == 1:
				out = append(out, tagged[0])
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return indexLess(out[i].index, out[j].index) })
	return out
}

func indexLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isTime reports whether t is time.Time. It compares names because naming
// the type itself (reflect.TypeFor[time.Time]) kept time.Time's methods,
// and with them time's formatting, in every guest (130 KB of code that a
// cold start compiles).
func isTime(t reflect.Type) bool { return t.PkgPath() == "time" && t.Name() == "Time" }

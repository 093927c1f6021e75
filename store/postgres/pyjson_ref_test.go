package postgres

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// The reference the one-pass rewrite is checked against (FuzzRewrite):
// the conversion done on decoded values.

// decodeJSON decodes with numbers kept as written.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// convert renames the struct field keys in v, typed t, to Python's names
// (toPython) or to the Go JSON names.
func convert(v any, t reflect.Type, toPython bool, depth int) any {
	if depth > maxJSONDepth || t == nil {
		return v
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		si := structFields(t)
		out := make(map[string]any, len(m))
		for k, x := range m {
			fi := si.byJSON[k]
			if fi == nil {
				fi = si.byPython[k]
			}
			if fi == nil {
				// Unknown to this build (a newer google-adk field, or the
				// event's timestamp, which is no struct field): kept.
				out[k] = x
				continue
			}
			name := fi.json
			if toPython {
				name = fi.python
			}
			out[name] = convert(x, fi.typ, toPython, depth+1)
		}
		return out
	case reflect.Slice, reflect.Array:
		if t == bytesType || t.Elem().Kind() == reflect.Uint8 {
			if s, ok := v.(string); ok {
				return base64Alphabet(s, toPython)
			}
			return v
		}
		l, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = convert(x, t.Elem(), toPython, depth+1)
		}
		return out
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || t.Elem().Kind() == reflect.Interface {
			return v
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = convert(x, t.Elem(), toPython, depth+1)
		}
		return out
	}
	return v
}

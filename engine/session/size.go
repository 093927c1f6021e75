package session

import (
	"encoding/json"
	"reflect"
	"sync"

	"google.golang.org/genai"
)

// EventSize approximates the bytes e holds, about the size of its JSON:
// strings and byte slices by their length, every other scalar a few
// bytes, plus a little per key and element. It walks every exported
// field, so that no field of an event (a part's inline data, grounding
// metadata, a replacement's custom metadata) escapes a bound built on it;
// it allocates nothing for the maps, lists and scalars that tool results
// and state are made of. It is meant for bounds on what a run produces,
// not for exact accounting: escapes and number formatting are not
// counted.
func EventSize(e *Event) int64 {
	if e == nil {
		return 0
	}
	return reflectSize(reflect.ValueOf(e).Elem(), 0)
}

// PartSize is EventSize for one part of a content.
func PartSize(p *genai.Part) int64 {
	if p == nil {
		return 0
	}
	return reflectSize(reflect.ValueOf(p).Elem(), 0)
}

// ValueSize is EventSize for one value (a tool result, a state value).
func ValueSize(v any) int64 { return valueSize(v, 0) }

// maxSizeDepth stops the walk of a value nested deeper (a cyclic Go
// value, which cannot be stored anyway): what lies below is not counted.
const maxSizeDepth = 1000

var (
	anySliceType = reflect.TypeFor[[]any]()
	anyMapType   = reflect.TypeFor[map[string]any]()
)

func valueSize(v any, depth int) int64 {
	if depth > maxSizeDepth {
		return 0
	}
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(x)) + 2
	case bool:
		return 5
	case float64, float32, int, int64, int32, uint64, uint32:
		return 8
	case json.Number:
		return int64(len(x))
	case json.RawMessage:
		return int64(len(x))
	case []byte:
		return int64(len(x))*4/3 + 2 // base64
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + 4 + valueSize(e, depth+1)
		}
		return n
	case []any:
		n := int64(2)
		for _, e := range x {
			n += 1 + valueSize(e, depth+1)
		}
		return n
	}
	return reflectSize(reflect.ValueOf(v), depth)
}

func reflectSize(v reflect.Value, depth int) int64 {
	if depth > maxSizeDepth || !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return reflectSize(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		if !v.CanInterface() {
			return reflectSize(v.Elem(), depth+1)
		}
		return valueSize(v.Interface(), depth+1)
	case reflect.Struct:
		var n int64
		for _, i := range exportedFields(v.Type()) {
			n += reflectSize(v.Field(i), depth+1)
		}
		return n
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())*4/3 + 2
		}
		if v.Type() == anySliceType && v.CanInterface() {
			return valueSize(v.Interface(), depth)
		}
		n := int64(0)
		for i := range v.Len() {
			n += 1 + reflectSize(v.Index(i), depth+1)
		}
		return n
	case reflect.Map:
		if v.Len() == 0 {
			return 0
		}
		if v.Type() == anyMapType && v.CanInterface() {
			return valueSize(v.Interface(), depth)
		}
		n := int64(2)
		for it := v.MapRange(); it.Next(); {
			n += 4 + reflectSize(it.Key(), depth+1) + reflectSize(it.Value(), depth+1)
		}
		return n
	case reflect.String:
		if v.Len() == 0 {
			return 0 // omitted, as most of an event's empty fields are
		}
		return int64(v.Len()) + 2
	case reflect.Bool:
		if !v.Bool() {
			return 0
		}
		return 5
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		if v.IsZero() {
			return 0
		}
		return 8
	}
	return 0
}

// fieldCache holds exportedFields' answers: a type's fields are listed
// once per process.
var fieldCache sync.Map // reflect.Type -> []int

// exportedFields lists the indexes of t's exported fields.
func exportedFields(t reflect.Type) []int {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]int)
	}
	var f []int
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			f = append(f, i)
		}
	}
	fieldCache.Store(t, f)
	return f
}

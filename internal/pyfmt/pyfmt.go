// Package pyfmt renders Go values as Python's str() and repr() would, for
// google-adk byte compatibility: wherever google-adk formats a JSON-like
// value into text (state injected into instructions, another agent's
// function calls and results relayed as text), adkhost must produce the
// same bytes.
//
// Str and Repr format a Go value as the Python value a Python program would
// hold for it:
//
//   - nil, nil pointers, interfaces, slices and maps: None. (Python has no
//     nil list or dict; encoding/json writes them as null, which is what a
//     Python session holds once the value is stored.)
//   - bool: True / False.
//   - signed and unsigned integers, *big.Int: int.
//   - float64: see "Numbers" below; float32 is widened to float64 first.
//   - json.Number: what Python's json.loads makes of the literal: an int
//     when it has no fraction or exponent, a float otherwise ("5" is 5,
//     "5.0" is 5.0, "1e400" is inf).
//   - complex64, complex128: complex ("(1+2j)", "2j").
//   - string (and named string types): str. Str returns it unchanged, Repr
//     quotes it.
//   - []byte and byte arrays: bytes, b'...'. json.RawMessage is decoded
//     (with UseNumber) and formatted as the JSON value it holds.
//   - other slices and arrays: list, "[1, 'a', None]".
//   - maps: dict, "{'a': 1, 'b': [True]}". Python dicts keep insertion
//     order; Go maps have none and JSON-decoded Go maps have lost it, so
//     keys are sorted: strings in code point order, numbers numerically,
//     other keys by their repr. For a dict whose keys were inserted in
//     sorted order (JSON from Python with sort_keys, or from Go's encoder)
//     the output is identical. StrOrdered and StrArgs take the order
//     from a hint of package keyorder instead (google-adk itself only
//     sorts the top level of function-call args).
//   - values implementing error or fmt.Stringer: their Error() / String()
//     text, unquoted even inside containers (like a Python object whose
//     __repr__ equals __str__).
//   - structs (and pointers to them): JSON-encoded and decoded again (with
//     UseNumber), so they print as the dict they become once stored; if
//     encoding fails, fmt.Sprint.
//   - anything else (channels, funcs): fmt.Sprint.
//
// # Numbers
//
// Go's encoding/json (and YAML decoders that convert through JSON)
// decode every JSON number, 5 as well as 5.0, into float64, whereas
// Python's json keeps 5 an int and prints it as "5". In adkhost almost all
// values reach this package from JSON (model function-call args, tool
// results, session state), so a float64 holding a whole number within
// ±2^53 (the range in which float64 represents every integer exactly) is
// printed as an int: float64(5) prints "5", not "5.0". Negative zero is the
// exception: no integer encodes to -0, so it stays the float -0.0. Other
// float64 values print as Python's repr(float) does (0.1, 1e+16, 1e-05, inf,
// nan). Decode with json.Decoder.UseNumber to keep the exact int/float
// distinction (json.Number("5.0") prints "5.0"), and use FloatRepr for a
// value known to be a Python float.
//
// # Strings
//
// Strings inside containers, and at the top level in Repr, use Python's
// repr (StringRepr): single quotes unless the text holds a single quote and
// no double quote, backslash escapes for \\, \t, \n, \r and the quote,
// \xhh / \uhhhh / \Uhhhhhhhh for characters Python 3.11 (google-adk's
// runtime, Unicode 14.0) does not consider printable. Invalid UTF-8 bytes
// count as U+FFFD, which is what they become once the value is stored as
// JSON. A container that holds itself prints as [...] / {...} at the point
// of recursion, as in Python.
//
// The package also provides Python's semantics for whitespace (IsSpace,
// Strip) and identifiers (IsIdentifier).
package pyfmt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// Str formats v as Python's str(v) formats the value a Python program would
// hold for it (see the package documentation for the mapping).
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var p printer
	p.value(v, false)
	return p.b.String()
}

// StrOrdered is Str printing the dicts of v in the key order of hint, a
// hint of package keyorder (the skeleton of the JSON v was decoded from):
// Python keeps a dict's insertion order. Dicts the hint does not order
// (nil hint, keys changed since) are sorted as Str sorts them.
func StrOrdered(v any, hint json.RawMessage) string {
	if hint == nil {
		return Str(v)
	}
	if s, ok := v.(string); ok {
		return s
	}
	p := printer{order: keyorder.Parse(hint)}
	p.value(v, false)
	return p.b.String()
}

// StrArgs formats function call args as google-adk relays them: the top
// level sorted (it sorts them), nested dicts in the order of hint (see
// StrOrdered).
func StrArgs(args map[string]any, hint json.RawMessage) string {
	if args == nil {
		return "None"
	}
	p := printer{order: keyorder.Parse(hint), sortTop: true}
	p.value(args, false)
	return p.b.String()
}

// Repr formats v as Python's repr(v) does, with the same mapping as Str. It
// differs from Str only for strings, which it quotes.
func Repr(v any) string {
	var p printer
	p.value(v, true)
	return p.b.String()
}

// ReprOrdered is Repr printing the dicts of v in the key order of hint (see
// StrOrdered).
func ReprOrdered(v any, hint json.RawMessage) string {
	p := printer{order: keyorder.Parse(hint)}
	p.value(v, true)
	return p.b.String()
}

type printer struct {
	b strings.Builder
	// active holds the containers being printed, to detect recursion.
	active []visitKey
	// order is the key-order hint of the value value() is about to print;
	// value consumes it, so only plain JSON shapes (map[string]any, []any)
	// are ordered.
	order *keyorder.Tree
	// sortTop sorts the keys of the outermost map whatever order says.
	sortTop bool
}

// visitKey identifies a slice or map: Python's object identity.
type visitKey struct {
	ptr unsafe.Pointer
	n   int
	typ reflect.Type
}

var (
	errorType      = reflect.TypeFor[error]()
	stringerType   = reflect.TypeFor[fmt.Stringer]()
	jsonNumberType = reflect.TypeFor[json.Number]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	bigIntPtrType  = reflect.TypeFor[*big.Int]()
	stringMapType  = reflect.TypeFor[map[string]any]()
	anySliceType   = reflect.TypeFor[[]any]()
)

// value formats v; repr selects repr() over str() for a top-level string.
// The common JSON shapes are handled without reflection.
func (p *printer) value(v any, repr bool) {
	order := p.order
	p.order = nil
	switch t := v.(type) {
	case nil:
		p.b.WriteString("None")
	case string:
		if repr {
			writeStringRepr(&p.b, t)
		} else {
			p.b.WriteString(t)
		}
	case bool:
		writeBool(&p.b, t)
	case float64:
		writeNumber(&p.b, t)
	case int:
		p.b.WriteString(strconv.Itoa(t))
	case int64:
		p.b.WriteString(strconv.FormatInt(t, 10))
	case json.Number:
		writeJSONNumber(&p.b, string(t))
	case map[string]any:
		p.stringMap(t, order)
	case []any:
		p.list(t, order)
	default:
		p.reflectValue(reflect.ValueOf(v), repr)
	}
}

// elem formats a container element or key.
func (p *printer) elem(v reflect.Value) {
	if v.CanInterface() {
		p.value(v.Interface(), true)
	} else {
		p.reflectValue(v, true)
	}
}

func (p *printer) reflectValue(v reflect.Value, repr bool) {
	b := &p.b
	if !v.IsValid() {
		b.WriteString("None")
		return
	}
	t := v.Type()
	switch t {
	case jsonNumberType:
		writeJSONNumber(b, v.String())
		return
	case rawMessageType:
		if v.IsNil() {
			b.WriteString("None") // encoding/json writes a nil RawMessage as null
		} else {
			p.rawJSON(v.Bytes(), repr)
		}
		return
	case bigIntPtrType:
		if v.IsNil() {
			b.WriteString("None")
		} else {
			b.WriteString(v.Interface().(*big.Int).String())
		}
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() {
			b.WriteString("None")
			return
		}
		if v.Kind() == reflect.Interface {
			p.reflectValue(v.Elem(), repr)
			return
		}
	}
	if v.CanInterface() {
		if t.Implements(errorType) {
			b.WriteString(v.Interface().(error).Error())
			return
		}
		if t.Implements(stringerType) {
			b.WriteString(v.Interface().(fmt.Stringer).String())
			return
		}
	}
	switch v.Kind() {
	case reflect.Bool:
		writeBool(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		writeNumber(b, v.Float())
	case reflect.Complex64, reflect.Complex128:
		writeComplexRepr(b, v.Complex())
	case reflect.String:
		if repr {
			writeStringRepr(b, v.String())
		} else {
			b.WriteString(v.String())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			writeBytesRepr(b, v.Bytes())
			return
		}
		p.reflectList(v)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			bs := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(bs), v)
			writeBytesRepr(b, bs)
			return
		}
		p.reflectList(v)
	case reflect.Map:
		p.reflectDict(v)
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			p.viaJSON(v, repr)
			return
		}
		p.reflectValue(v.Elem(), repr)
	case reflect.Struct:
		p.viaJSON(v, repr)
	default:
		if v.CanInterface() {
			fmt.Fprint(b, v.Interface())
		} else {
			fmt.Fprint(b, v)
		}
	}
}

// enter reports whether the container k is not already being printed, and
// marks it; every successful enter is paired with a leave.
func (p *printer) enter(k visitKey) bool {
	if k.ptr != nil && slices.Contains(p.active, k) {
		return false
	}
	p.active = append(p.active, k)
	return true
}

func (p *printer) leave() { p.active = p.active[:len(p.active)-1] }

func (p *printer) list(s []any, order *keyorder.Tree) {
	if s == nil {
		p.b.WriteString("None")
		return
	}
	if len(s) == 0 {
		p.b.WriteString("[]")
		return
	}
	if !p.enter(visitKey{ptr: unsafe.Pointer(unsafe.SliceData(s)), n: len(s), typ: anySliceType}) {
		p.b.WriteString("[...]")
		return
	}
	p.b.WriteByte('[')
	for i, x := range s {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.order = order.Item(i)
		p.value(x, true)
	}
	p.b.WriteByte(']')
	p.leave()
}

func (p *printer) stringMap(m map[string]any, order *keyorder.Tree) {
	if m == nil {
		p.b.WriteString("None")
		return
	}
	if len(m) == 0 {
		p.b.WriteString("{}")
		return
	}
	if !p.enter(visitKey{ptr: reflect.ValueOf(m).UnsafePointer(), typ: stringMapType}) {
		p.b.WriteString("{...}")
		return
	}
	keys, fields := order.Order(m)
	if p.sortTop {
		keys, fields, p.sortTop = nil, nil, false
	}
	if keys == nil {
		keys = make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	p.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			p.b.WriteString(", ")
		}
		writeStringRepr(&p.b, k)
		p.b.WriteString(": ")
		if fields != nil {
			p.order = fields[i]
		} else if order != nil {
			p.order = order.Field(k)
		}
		p.value(m[k], true)
	}
	p.b.WriteByte('}')
	p.leave()
}

// reflectList formats a non-nil slice or an array.
func (p *printer) reflectList(v reflect.Value) {
	k := visitKey{}
	if v.Kind() == reflect.Slice && v.Len() > 0 {
		k = visitKey{ptr: v.UnsafePointer(), n: v.Len(), typ: v.Type()}
	}
	if !p.enter(k) {
		p.b.WriteString("[...]")
		return
	}
	p.b.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.elem(v.Index(i))
	}
	p.b.WriteByte(']')
	p.leave()
}

// reflectDict formats a non-nil map.
func (p *printer) reflectDict(v reflect.Value) {
	if !p.enter(visitKey{ptr: v.UnsafePointer(), typ: v.Type()}) {
		p.b.WriteString("{...}")
		return
	}
	keys := v.MapKeys()
	sortKeys(keys)
	p.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.elem(k)
		p.b.WriteString(": ")
		p.elem(v.MapIndex(k))
	}
	p.b.WriteByte('}')
	p.leave()
}

func (p *printer) viaJSON(v reflect.Value, repr bool) {
	if !v.CanInterface() {
		fmt.Fprint(&p.b, v)
		return
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		fmt.Fprint(&p.b, v.Interface())
		return
	}
	p.rawJSON(data, repr)
}

func (p *printer) rawJSON(data []byte, repr bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		writeBytesRepr(&p.b, data)
		return
	}
	p.value(x, repr)
}

// sortKeys orders map keys: numbers numerically, strings by code point,
// then everything else by repr. Mixed kinds group by kind first.
func sortKeys(keys []reflect.Value) {
	deref := func(k reflect.Value) reflect.Value {
		for k.Kind() == reflect.Interface && !k.IsNil() {
			k = k.Elem()
		}
		return k
	}
	rank := func(k reflect.Value) int {
		switch k.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
			return 0
		case reflect.String:
			return 1
		}
		return 2
	}
	num := func(k reflect.Value) float64 {
		switch k.Kind() {
		case reflect.Bool:
			if k.Bool() {
				return 1
			}
			return 0
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return float64(k.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return float64(k.Uint())
		}
		return k.Float()
	}
	reprOf := func(k reflect.Value) string {
		var p printer
		p.elem(k)
		return p.b.String()
	}
	slices.SortStableFunc(keys, func(a, b reflect.Value) int {
		a, b = deref(a), deref(b)
		ra, rb := rank(a), rank(b)
		if ra != rb {
			return cmp.Compare(ra, rb)
		}
		switch ra {
		case 0:
			return cmp.Compare(num(a), num(b))
		case 1:
			return strings.Compare(a.String(), b.String())
		}
		return strings.Compare(reprOf(a), reprOf(b))
	})
}

func writeBool(b *strings.Builder, t bool) {
	if t {
		b.WriteString("True")
	} else {
		b.WriteString("False")
	}
}

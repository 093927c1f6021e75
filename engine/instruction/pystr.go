package instruction

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// PyStr formats v the way Python's str(v) formats the value a Python program
// would hold for it. It is the formatting google-adk applies to state values
// it substitutes into instructions, and other packages use it wherever
// google-adk calls str() on a JSON-like value.
//
// Mapping of Go values to Python values:
//
//   - nil, and nil pointers and interfaces: None.
//   - bool: True / False.
//   - signed and unsigned integers, *big.Int: int.
//   - float32, float64: float, printed with Python's shortest repr
//     (1.0, 0.1, 1e+16, 1e-05, inf, -inf, nan). A float64 is always a Python
//     float: float64(5) prints as "5.0". Go's encoding/json decodes every
//     JSON number into float64, whereas Python's json keeps 5 an int; decode
//     with json.Decoder.UseNumber to keep the distinction.
//   - json.Number: what Python's json.loads makes of the literal: an int when
//     it has no fraction or exponent, a float otherwise.
//   - complex64, complex128: complex ("(1+2j)", "2j").
//   - string (and named string types): str; PyStr returns it unchanged.
//   - []byte (and named byte slices): bytes, b'...'. json.RawMessage is
//     decoded (with UseNumber) and formatted as the JSON value it holds.
//   - slices and arrays: list, "[1, 'a', None]"; nil slices print as "[]".
//   - maps: dict, "{'a': 1, 'b': [True]}"; nil maps print as "{}". Python
//     dicts keep insertion order but Go maps have none, and JSON-decoded Go
//     maps have lost it, so keys are sorted: strings in code point order,
//     numbers numerically, other keys by their repr. For a dict with keys in
//     sorted insertion order (the common case for JSON from Python with
//     sort_keys or from Go's encoder) the output is identical.
//   - values implementing error or fmt.Stringer: their Error() / String()
//     text, unquoted even inside containers (like a Python object whose
//     __repr__ equals __str__).
//   - structs (and pointers to them): JSON-encoded and decoded again, so they
//     print as the dict they become once state is stored; if encoding fails,
//     fmt.Sprint.
//   - anything else (channels, funcs): fmt.Sprint.
//
// Strings inside containers use Python's repr: single quotes unless the text
// holds a single quote and no double quote, backslash escapes for \\, \t,
// \n, \r and the quote, \xhh / \uhhhh / \Uhhhhhhhh for characters Python 3.11
// does not consider printable. Invalid UTF-8 bytes count as U+FFFD, which is
// what they become once the value is stored as JSON. A container that holds
// itself prints as [...] / {...} at the point of recursion, as in Python.
func PyStr(v any) string {
	var b strings.Builder
	f := pyFormatter{b: &b}
	f.format(reflect.ValueOf(v), false)
	return b.String()
}

// PyRepr formats v the way Python's repr(v) does, with the same mapping as
// PyStr. It differs from PyStr only for strings, which it quotes.
func PyRepr(v any) string {
	var b strings.Builder
	f := pyFormatter{b: &b}
	f.format(reflect.ValueOf(v), true)
	return b.String()
}

// PyFloatRepr formats f as Python's repr(float) does.
func PyFloatRepr(f float64) string { return pyFloat(f, true) }

// PyStringRepr formats s as Python's repr(str) does.
func PyStringRepr(s string) string {
	var b strings.Builder
	writeStrRepr(&b, s)
	return b.String()
}

type pyFormatter struct {
	b *strings.Builder
	// active holds the containers being printed, to detect recursion.
	active []visitKey
}

type visitKey struct {
	ptr uintptr
	n   int
	typ reflect.Type
}

var (
	errorType      = reflect.TypeFor[error]()
	stringerType   = reflect.TypeFor[fmt.Stringer]()
	jsonNumberType = reflect.TypeFor[json.Number]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	bigIntPtrType  = reflect.TypeFor[*big.Int]()
)

func (f *pyFormatter) format(v reflect.Value, repr bool) {
	b := f.b
	if !v.IsValid() {
		b.WriteString("None")
		return
	}
	t := v.Type()
	switch t {
	case jsonNumberType:
		b.WriteString(jsonNumberStr(v.String()))
		return
	case rawMessageType:
		f.formatRawJSON(v.Bytes(), repr)
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
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("None")
			return
		}
		f.format(v.Elem(), repr)
		return
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("None")
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
		if v.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(pyFloat(v.Float(), true))
	case reflect.Complex64, reflect.Complex128:
		b.WriteString(pyComplex(v.Complex()))
	case reflect.String:
		if repr {
			writeStrRepr(b, v.String())
		} else {
			b.WriteString(v.String())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			writeBytesRepr(b, v.Bytes())
			return
		}
		f.formatList(v)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			bs := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(bs), v)
			writeBytesRepr(b, bs)
			return
		}
		f.formatList(v)
	case reflect.Map:
		f.formatDict(v)
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			f.formatViaJSON(v, repr)
			return
		}
		f.format(v.Elem(), repr)
	case reflect.Struct:
		f.formatViaJSON(v, repr)
	default:
		if v.CanInterface() {
			fmt.Fprint(b, v.Interface())
		} else {
			fmt.Fprint(b, v)
		}
	}
}

// enter reports whether v is not already being printed, and marks it.
func (f *pyFormatter) enter(v reflect.Value) bool {
	if v.Kind() == reflect.Array || v.Len() == 0 {
		f.active = append(f.active, visitKey{})
		return true
	}
	k := visitKey{ptr: uintptr(v.UnsafePointer()), n: v.Len(), typ: v.Type()}
	if k.ptr != 0 && slices.Contains(f.active, k) {
		return false
	}
	f.active = append(f.active, k)
	return true
}

func (f *pyFormatter) leave() { f.active = f.active[:len(f.active)-1] }

func (f *pyFormatter) formatList(v reflect.Value) {
	if !f.enter(v) {
		f.b.WriteString("[...]")
		return
	}
	defer f.leave()
	f.b.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.format(v.Index(i), true)
	}
	f.b.WriteByte(']')
}

func (f *pyFormatter) formatDict(v reflect.Value) {
	if !f.enter(v) {
		f.b.WriteString("{...}")
		return
	}
	defer f.leave()
	keys := v.MapKeys()
	sortKeys(keys)
	f.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.format(k, true)
		f.b.WriteString(": ")
		f.format(v.MapIndex(k), true)
	}
	f.b.WriteByte('}')
}

func (f *pyFormatter) formatViaJSON(v reflect.Value, repr bool) {
	if !v.CanInterface() {
		fmt.Fprint(f.b, v)
		return
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		fmt.Fprint(f.b, v.Interface())
		return
	}
	f.formatRawJSON(data, repr)
}

func (f *pyFormatter) formatRawJSON(data []byte, repr bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		writeBytesRepr(f.b, data)
		return
	}
	f.format(reflect.ValueOf(x), repr)
}

// sortKeys orders map keys: numbers numerically, strings by code point,
// then everything else by repr. Mixed kinds group by kind first.
func sortKeys(keys []reflect.Value) {
	rank := func(k reflect.Value) int {
		for k.Kind() == reflect.Interface && !k.IsNil() {
			k = k.Elem()
		}
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
		for k.Kind() == reflect.Interface {
			k = k.Elem()
		}
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
	str := func(k reflect.Value) string {
		for k.Kind() == reflect.Interface {
			k = k.Elem()
		}
		return k.String()
	}
	slices.SortStableFunc(keys, func(a, b reflect.Value) int {
		ra, rb := rank(a), rank(b)
		if ra != rb {
			return cmp.Compare(ra, rb)
		}
		switch ra {
		case 0:
			return cmp.Compare(num(a), num(b))
		case 1:
			return strings.Compare(str(a), str(b))
		}
		var fa, fb strings.Builder
		(&pyFormatter{b: &fa}).format(a, true)
		(&pyFormatter{b: &fb}).format(b, true)
		return strings.Compare(fa.String(), fb.String())
	})
}

// jsonNumberStr formats a JSON number literal as Python's json.loads result.
func jsonNumberStr(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return n.String()
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range: Python's float() gives inf or 0.0 as Go does.
		if !errors.Is(err, strconv.ErrRange) {
			return s
		}
	}
	return pyFloat(f, true)
}

// pyFloat formats f as Python's repr(float) (addDot0) or as the parts of a
// complex repr (no ".0" added).
func pyFloat(f float64, addDot0 bool) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	// Shortest round-tripping digits, as Python's repr uses.
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if e[0] == '-' {
		sign = "-"
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // digits d1d2... with the point after decpt digits
	var out string
	if decpt <= -4 || decpt > 16 {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		x := decpt - 1
		xs := "+"
		if x < 0 {
			xs = "-"
			x = -x
		}
		xd := strconv.Itoa(x)
		if len(xd) < 2 {
			xd = "0" + xd
		}
		out += "e" + xs + xd
	} else {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			out = digits + strings.Repeat("0", decpt-len(digits))
			if addDot0 {
				out += ".0"
			}
		default:
			out = digits[:decpt] + "." + digits[decpt:]
		}
	}
	return sign + out
}

// pyComplex formats c as Python's repr(complex).
func pyComplex(c complex128) string {
	re, im := real(c), imag(c)
	imS := pyFloat(im, false)
	if re == 0 && !math.Signbit(re) {
		return imS + "j"
	}
	if !strings.HasPrefix(imS, "-") {
		imS = "+" + imS
	}
	return "(" + pyFloat(re, false) + imS + "j)"
}

const hexDigits = "0123456789abcdef"

// writeStrRepr writes Python's repr(str) of s.
func writeStrRepr(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7F:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xF])
		case r < 0x7F:
			b.WriteRune(r)
		case isPyPrintable(r):
			b.WriteRune(r)
		case r <= 0xFF:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xF])
		case r <= 0xFFFF:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
}

// writeBytesRepr writes Python's repr(bytes) of p.
func writeBytesRepr(b *strings.Builder, p []byte) {
	quote := byte('\'')
	if bytes.IndexByte(p, '\'') >= 0 && bytes.IndexByte(p, '"') < 0 {
		quote = '"'
	}
	b.WriteByte('b')
	b.WriteByte(quote)
	for _, c := range p {
		switch {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ' || c >= 0x7F:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
}

// pyStrip is Python's str.strip() with no arguments.
func pyStrip(s string) string {
	return strings.TrimFunc(s, isPySpace)
}

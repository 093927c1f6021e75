package contents

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyRepr renders a JSON-like Go value the way Python's str() renders the
// equivalent Python value (a dict's str is its repr): dicts as
// {'key': value} with ", " separators, lists as [a, b], strings quoted with
// Python's quote and escape rules, True/False/None, ints and floats.
//
// Go maps have no insertion order, so every dict's keys are sorted (Python
// keeps insertion order below the top level; google-adk only sorts the top
// level of function-call args). Integral float64 values within ±2^53 are
// written as ints: Go decodes every JSON number to float64, while Python
// decodes "3" to an int and prints 3.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
	case string:
		writeStrRepr(b, t)
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case float64:
		writeFloatRepr(b, t)
	case float32:
		writeFloatRepr(b, float64(t))
	case int:
		b.WriteString(strconv.FormatInt(int64(t), 10))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(t), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(t, 10))
	case json.Number:
		writeNumberRepr(b, t)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, t[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, x)
		}
		b.WriteByte(']')
	default:
		writeReflectRepr(b, v)
	}
}

// writeReflectRepr handles the less common shapes: other integer kinds,
// typed maps and slices, pointers. Anything else (structs, byte slices) is
// rendered as what it encodes to in JSON, as it would reach a Python
// session.
func writeReflectRepr(b *strings.Builder, v any) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(rv.Int(), 10))
		return
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(rv.Uint(), 10))
		return
	case reflect.Float32, reflect.Float64:
		writeFloatRepr(b, rv.Float())
		return
	case reflect.Bool:
		writeRepr(b, rv.Bool())
		return
	case reflect.String:
		writeStrRepr(b, rv.String())
		return
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			b.WriteString("None")
			return
		}
		writeRepr(b, rv.Elem().Interface())
		return
	case reflect.Map:
		if rv.IsNil() {
			b.WriteString("None")
			return
		}
		if rv.Type().Key().Kind() == reflect.String {
			keys := rv.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				writeStrRepr(b, k.String())
				b.WriteString(": ")
				writeRepr(b, rv.MapIndex(k).Interface())
			}
			b.WriteByte('}')
			return
		}
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			b.WriteString("None")
			return
		}
		if rv.Type().Elem().Kind() != reflect.Uint8 {
			b.WriteByte('[')
			for i := 0; i < rv.Len(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				writeRepr(b, rv.Index(i).Interface())
			}
			b.WriteByte(']')
			return
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		b.WriteString(fmt.Sprint(v))
		return
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		b.WriteString(fmt.Sprint(v))
		return
	}
	writeRepr(b, x)
}

// writeNumberRepr renders a JSON number literal as Python's json module
// would have decoded it: an int (unbounded) when it has no fraction or
// exponent, otherwise a float.
func writeNumberRepr(b *strings.Builder, n json.Number) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			b.WriteString(i.String())
			return
		}
	}
	f, err := n.Float64()
	if err != nil {
		b.WriteString(s)
		return
	}
	writePyFloat(b, f)
}

// writeFloatRepr writes a Go float: integral values within ±2^53 as ints
// (see pyRepr), others as Python's float repr.
func writeFloatRepr(b *strings.Builder, f float64) {
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		b.WriteString(strconv.FormatInt(int64(f), 10))
		return
	}
	writePyFloat(b, f)
}

// writePyFloat writes Python's repr of a float: the shortest round-trip
// digits, positional when the decimal exponent is in [-4, 16) (with ".0"
// added to whole numbers), otherwise d.ddde±XX.
func writePyFloat(b *strings.Builder, f float64) {
	switch {
	case math.IsNaN(f):
		b.WriteString("nan")
		return
	case math.IsInf(f, 1):
		b.WriteString("inf")
		return
	case math.IsInf(f, -1):
		b.WriteString("-inf")
		return
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+06
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if neg {
		b.WriteByte('-')
	}
	if exp < -4 || exp >= 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
		return
	}
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(digits)
	case point >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	}
}

// writeStrRepr writes Python's repr of a str: single quotes unless the
// text has a single quote and no double quote; backslash, the quote, \t,
// \n and \r escaped; other non-printable characters as \xNN, \uNNNN or
// \UNNNNNNNN. Invalid UTF-8 bytes read as U+FFFD.
func writeStrRepr(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r < 0x7f:
			b.WriteByte(byte(r))
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r <= 0xffff:
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>uint(shift))&0xf])
			}
		default:
			b.WriteString(`\U`)
			for shift := 28; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>uint(shift))&0xf])
			}
		}
	}
	b.WriteByte(quote)
}

// pyIsSpace reports whether r is whitespace for Python's str.strip():
// Go's unicode.IsSpace plus the information separators U+001C..U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// hasNonSpace reports whether Python's s.strip() would be non-empty.
func hasNonSpace(s string) bool {
	return strings.TrimFunc(s, pyIsSpace) != ""
}

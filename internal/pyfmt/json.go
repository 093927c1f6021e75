package pyfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// JSONDumps renders v as Python's json.dumps(v, ensure_ascii=False) with
// its default separators (", " and ": "). v is first turned into JSON data
// by encoding/json, so structs and typed maps work; numbers follow the
// package's number policy and map keys are sorted (Go maps have no order).
func JSONDumps(v any) (string, error) { return JSONDumpsOrdered(v, nil) }

// JSONDumpsOrdered is JSONDumps with the dicts of v in the key order of
// hint, a hint of package keyorder (see StrOrdered).
func JSONDumpsOrdered(v any, hint json.RawMessage) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("pyfmt.JSONDumps: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return "", fmt.Errorf("pyfmt.JSONDumps: %w", err)
	}
	var b strings.Builder
	writeJSON(&b, data, keyorder.Parse(hint))
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, order *keyorder.Tree) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		writeJSONNumber(b, string(t))
	case string:
		writeJSONString(b, t)
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, e, order.Item(i))
		}
		b.WriteByte(']')
	case map[string]any:
		keys, fields := order.Order(t)
		if keys == nil {
			keys = make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			slices.Sort(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, k)
			b.WriteString(": ")
			if fields != nil {
				writeJSON(b, t[k], fields[i])
			} else {
				writeJSON(b, t[k], order.Field(k))
			}
		}
		b.WriteByte('}')
	}
}

// JSONString renders s as Python's json.dumps(s, ensure_ascii=False)
// does: quotes, backslashes and control characters escaped, everything else
// as it is.
func JSONString(s string) string {
	var b strings.Builder
	writeJSONString(&b, s)
	return b.String()
}

// writeJSONString escapes as Python's json module does with
// ensure_ascii=False: quotes, backslashes and control characters only.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteString(s[i : i+size])
			}
		}
		i += size
	}
	b.WriteByte('"')
}

// ExactNumbers replaces the json.Number values of a JSON tree decoded with
// UseNumber by int64 for integers and float64 otherwise, as Python's
// json.loads keeps ints apart from floats. An integer beyond int64 stays a
// json.Number: Python's int is unbounded, and as a float64 it would lose
// digits. Maps and slices are changed in place; the converted tree is
// returned.
func ExactNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if IsIntLiteral(t) {
			return t
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = ExactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = ExactNumbers(e)
		}
	}
	return v
}

// JSONDumpsASCII renders v as Python's json.dumps(v) with its defaults:
// ensure_ascii escapes every character outside the printable ASCII range
// (from U+007F on) as \uXXXX, with surrogate pairs past U+FFFF.
func JSONDumpsASCII(v any) (string, error) {
	s, err := JSONDumps(v)
	if err != nil {
		return "", err
	}
	// Outside string literals JSONDumps writes ASCII only, so every
	// character to escape is inside a string.
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String(), nil
}

// IsIntLiteral reports whether n is a JSON integer literal (no fraction, no
// exponent), which Python's json.loads makes an int however large.
func IsIntLiteral(n json.Number) bool {
	return n != "" && !strings.ContainsAny(string(n), ".eE")
}

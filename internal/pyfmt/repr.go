package pyfmt

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// FloatRepr formats f as Python's repr(float) does: the shortest digits
// that round-trip, positional for decimal exponents in [-4, 16) with ".0"
// added to whole numbers (5.0, 0.0001, 1e+16, 1e-05, inf, -inf, nan). Unlike
// Str, it treats f as a Python float even when it holds a whole number.
func FloatRepr(f float64) string {
	var b strings.Builder
	writeFloatRepr(&b, f, true)
	return b.String()
}

// StringRepr formats s as Python's repr(str) does.
func StringRepr(s string) string {
	var b strings.Builder
	writeStringRepr(&b, s)
	return b.String()
}

// BytesRepr formats p as Python's repr(bytes) does.
func BytesRepr(p []byte) string {
	var b strings.Builder
	writeBytesRepr(&b, p)
	return b.String()
}

// maxExactInt is 2^53: every integer of at most this magnitude is exactly
// representable as a float64.
const maxExactInt = 1 << 53

// writeNumber writes a Go float under the package's number policy: a whole
// number within ±2^53 other than -0 as an int (it most likely was a JSON
// integer), anything else as Python's float repr.
func writeNumber(b *strings.Builder, f float64) {
	if f == math.Trunc(f) && math.Abs(f) <= maxExactInt && !(f == 0 && math.Signbit(f)) {
		b.WriteString(strconv.FormatInt(int64(f), 10))
		return
	}
	writeFloatRepr(b, f, true)
}

// writeJSONNumber writes a JSON number literal as Python's json.loads
// result: an int (unbounded) when it has no fraction or exponent, otherwise
// a float.
func writeJSONNumber(b *strings.Builder, s string) {
	if !strings.ContainsAny(s, ".eE") {
		if n, ok := new(big.Int).SetString(s, 10); ok {
			b.WriteString(n.String())
			return
		}
		b.WriteString(s)
		return
	}
	f, err := strconv.ParseFloat(s, 64)
	// Out of range: Python's float() gives inf or 0.0 as Go does.
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		b.WriteString(s)
		return
	}
	writeFloatRepr(b, f, true)
}

// writeFloatRepr writes Python's repr(float) of f (addDot0) or the form a
// complex repr uses for its parts (no ".0" added to whole numbers).
func writeFloatRepr(b *strings.Builder, f float64, addDot0 bool) {
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
	// Shortest round-tripping digits, as Python's repr uses.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		b.WriteByte('-')
		e = e[1:]
	}
	i := bytes.IndexByte(e, 'e')
	mant, expStr := e[:i], e[i+1:]
	exp, _ := strconv.Atoi(string(expStr))
	var digitsBuf [24]byte
	digits := append(digitsBuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...) // skip the '.'
	}
	if exp < -4 || exp >= 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.Write(digits[1:])
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
		for range -point {
			b.WriteByte('0')
		}
		b.Write(digits)
	case point >= len(digits):
		b.Write(digits)
		for range point - len(digits) {
			b.WriteByte('0')
		}
		if addDot0 {
			b.WriteString(".0")
		}
	default:
		b.Write(digits[:point])
		b.WriteByte('.')
		b.Write(digits[point:])
	}
}

// writeComplexRepr writes Python's repr(complex) of c.
func writeComplexRepr(b *strings.Builder, c complex128) {
	re, im := real(c), imag(c)
	var ib strings.Builder
	writeFloatRepr(&ib, im, false)
	imS := ib.String()
	if re == 0 && !math.Signbit(re) {
		b.WriteString(imS)
		b.WriteByte('j')
		return
	}
	b.WriteByte('(')
	writeFloatRepr(b, re, false)
	if !strings.HasPrefix(imS, "-") {
		b.WriteByte('+')
	}
	b.WriteString(imS)
	b.WriteString("j)")
}

const hexDigits = "0123456789abcdef"

// writeStringRepr writes Python's repr(str) of s: single quotes unless the
// text has a single quote and no double quote; backslash, the quote, \t,
// \n and \r escaped; other characters that are not printable in Python
// 3.11 as \xhh, \uhhhh or \Uhhhhhhhh. Invalid UTF-8 bytes read as U+FFFD.
func writeStringRepr(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
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
		case r < ' ' || r == 0x7F:
			writeHexEscape(b, 'x', r, 2)
		case r < 0x7F:
			b.WriteByte(byte(r))
		case isPrintable(r):
			b.WriteRune(r)
		case r <= 0xFF:
			writeHexEscape(b, 'x', r, 2)
		case r <= 0xFFFF:
			writeHexEscape(b, 'u', r, 4)
		default:
			writeHexEscape(b, 'U', r, 8)
		}
	}
	b.WriteByte(quote)
}

// writeHexEscape writes \<kind> and the low n hex digits of r.
func writeHexEscape(b *strings.Builder, kind byte, r rune, n int) {
	b.WriteByte('\\')
	b.WriteByte(kind)
	for shift := 4 * (n - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>uint(shift))&0xF])
	}
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
			writeHexEscape(b, 'x', rune(c), 2)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
}

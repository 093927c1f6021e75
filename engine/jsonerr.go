package engine

import (
	"fmt"
	"strings"
)

// jsonSyntaxError describes why text is not JSON the way pydantic 2.14's
// parser (jiter) does, as pydantic's json_invalid error shows it:
// "<what> at line L column C", C counting bytes from 1 at the offending
// byte, or, at the end of the text, the number of bytes of its last line.
// It returns "" for valid JSON. Like jiter it takes NaN, Infinity and
// -Infinity as numbers.
func jsonSyntaxError(text string) string {
	p := &jsonScan{s: text}
	if !p.value() {
		return p.err
	}
	p.space()
	if p.i < len(p.s) {
		p.fail("trailing characters", p.i)
		return p.err
	}
	return ""
}

// jsonScan is a recursive-descent JSON scanner that stops at the first
// error; it keeps no values.
type jsonScan struct {
	s     string
	i     int
	depth int
	err   string
}

// maxJSONScanDepth bounds recursion; deeper text is reported as the end of
// the scan's reach (pydantic refuses it too, with a recursion error).
const maxJSONScanDepth = 512

// fail records the error at byte pos; pos == len(s) is the end of input.
func (p *jsonScan) fail(what string, pos int) bool {
	line := 1 + strings.Count(p.s[:pos], "\n")
	start := strings.LastIndexByte(p.s[:pos], '\n') + 1
	col := pos - start
	if pos < len(p.s) {
		col++
	}
	p.err = fmt.Sprintf("%s at line %d column %d", what, line, col)
	return false
}

func (p *jsonScan) eof(what string) bool { return p.fail("EOF while parsing "+what, len(p.s)) }

func (p *jsonScan) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScan) value() bool {
	p.space()
	if p.i >= len(p.s) {
		return p.eof("a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.nested(p.object)
	case c == '[':
		return p.nested(p.list)
	case c == '"':
		return p.str()
	case c == 't':
		return p.ident("true")
	case c == 'f':
		return p.ident("false")
	case c == 'n':
		return p.ident("null")
	case c == 'N':
		return p.ident("NaN")
	case c == 'I':
		return p.ident("Infinity")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.fail("expected value", p.i)
	}
}

func (p *jsonScan) nested(f func() bool) bool {
	if p.depth >= maxJSONScanDepth {
		return p.fail("recursion limit exceeded", p.i)
	}
	p.depth++
	defer func() { p.depth-- }()
	return f()
}

func (p *jsonScan) ident(word string) bool {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.s) {
			return p.eof("a value")
		}
		if p.s[p.i] != word[k] {
			return p.fail("expected ident", p.i)
		}
		p.i++
	}
	return true
}

func (p *jsonScan) digits() int {
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

func (p *jsonScan) number() bool {
	if p.s[p.i] == '-' {
		p.i++
		if p.i >= len(p.s) {
			return p.eof("a value")
		}
		if p.s[p.i] == 'I' {
			return p.ident("Infinity")
		}
	}
	switch {
	case p.i >= len(p.s):
		return p.eof("a value")
	case p.s[p.i] == '0':
		p.i++
		if p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			return p.fail("invalid number", p.i)
		}
	case p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return p.fail("invalid number", p.i)
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.i >= len(p.s) {
			return p.eof("a value")
		}
		if p.digits() == 0 {
			return p.fail("invalid number", p.i)
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.s) {
			return p.eof("a value")
		}
		if p.digits() == 0 {
			return p.fail("invalid number", p.i)
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// hex4 reads the four hex digits of a \u escape and returns its value.
func (p *jsonScan) hex4() (int, bool) {
	v := 0
	for k := 0; k < 4; k++ {
		if p.i >= len(p.s) {
			return 0, p.eof("a string")
		}
		c := p.s[p.i]
		if !isHex(c) {
			return 0, p.fail("invalid escape", p.i)
		}
		v = v<<4 | hexValue(c)
		p.i++
	}
	return v, true
}

func hexValue(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}

func (p *jsonScan) str() bool {
	p.i++ // opening quote
	for {
		if p.i >= len(p.s) {
			return p.eof("a string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return p.fail(`control character (\u0000-\u001F) found while parsing a string`, p.i)
		case c != '\\':
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			return p.eof("a string")
		}
		switch p.s[p.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			p.i++
			v, ok := p.hex4()
			if !ok {
				return false
			}
			switch {
			case v >= 0xDC00 && v < 0xE000:
				return p.fail("lone leading surrogate in hex escape", p.i-1)
			case v >= 0xD800:
				// A leading surrogate needs a trailing one escaped after it.
				for _, want := range []byte{'\\', 'u'} {
					if p.i >= len(p.s) {
						return p.eof("a string")
					}
					if p.s[p.i] != want {
						return p.fail("unexpected end of hex escape", p.i)
					}
					p.i++
				}
				w, ok := p.hex4()
				if !ok {
					return false
				}
				if w < 0xDC00 || w >= 0xE000 {
					return p.fail("lone leading surrogate in hex escape", p.i-1)
				}
			}
		default:
			return p.fail("invalid escape", p.i)
		}
	}
}

func (p *jsonScan) object() bool {
	p.i++ // {
	p.space()
	if p.i >= len(p.s) {
		return p.eof("an object")
	}
	if p.s[p.i] == '}' {
		p.i++
		return true
	}
	for {
		if p.s[p.i] != '"' {
			return p.fail("key must be a string", p.i)
		}
		if !p.str() {
			return false
		}
		p.space()
		if p.i >= len(p.s) {
			return p.eof("an object")
		}
		if p.s[p.i] != ':' {
			return p.fail("expected `:`", p.i)
		}
		p.i++
		if !p.value() {
			return false
		}
		p.space()
		if p.i >= len(p.s) {
			return p.eof("an object")
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			return true
		case ',':
			p.i++
			p.space()
			if p.i >= len(p.s) {
				return p.eof("a value")
			}
			if p.s[p.i] == '}' {
				return p.fail("trailing comma", p.i)
			}
		default:
			return p.fail("expected `,` or `}`", p.i)
		}
	}
}

func (p *jsonScan) list() bool {
	p.i++ // [
	p.space()
	if p.i >= len(p.s) {
		return p.eof("a list")
	}
	if p.s[p.i] == ']' {
		p.i++
		return true
	}
	for {
		if !p.value() {
			return false
		}
		p.space()
		if p.i >= len(p.s) {
			return p.eof("a list")
		}
		switch p.s[p.i] {
		case ']':
			p.i++
			return true
		case ',':
			p.i++
			p.space()
			if p.i >= len(p.s) {
				return p.eof("a value")
			}
			if p.s[p.i] == ']' {
				return p.fail("trailing comma", p.i)
			}
		default:
			return p.fail("expected `,` or `]`", p.i)
		}
	}
}

package abi

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A single-pass decoder for the hot messages: a tool's output
// (ToolCallOutput) and an untyped value (*any, as a state value). It builds
// the values the strict path builds (encoding/json with UseNumber, then
// exactNumbers) directly: objects as map[string]any, arrays as []any,
// integers as int64, other numbers as float64.
//
// It only ever succeeds on input the strict path accepts, with the same
// result, and gives up on anything unusual: invalid or merely odd JSON
// (invalid UTF-8, lone surrogates, which encoding/json replaces with
// U+FFFD), a field name that is not exactly the ABI's (encoding/json
// matches names case-insensitively), a field of the wrong type, an unknown
// field, deep nesting. The caller then runs the strict path, which decides
// and words the error, so every guarantee and message of Decode stays that
// of encoding/json. FuzzFastDecode checks the agreement.

// fastMaxDepth bounds the nesting the fast path follows; deeper values go
// to the strict path (encoding/json allows 10,000).
const fastMaxDepth = 1000

// decodeFast decodes data into v if v is one of the types it knows and
// data is plain enough; it reports whether it did. It leaves v unchanged
// when it does not.
func decodeFast(data []byte, v any) bool {
	switch t := v.(type) {
	case *any:
		if t == nil || *t != nil {
			// encoding/json decodes into what a non-nil interface
			// points to; leave that to it.
			return false
		}
		d := fastDecoder{b: data}
		x, ok := d.value(0)
		if !ok || !d.end() {
			return false
		}
		*t = x
		return true
	case *ToolCallOutput:
		if t == nil || t.Result != nil {
			return false
		}
		return decodeToolCallOutput(data, t)
	}
	return false
}

func decodeToolCallOutput(data []byte, o *ToolCallOutput) bool {
	d := fastDecoder{b: data}
	d.space()
	if !d.consume('{') {
		return false
	}
	version, errText := o.ABIVersion, o.Error
	var result any
	var resultJSON []byte
	d.space()
	if !d.consume('}') {
		for {
			d.space()
			key, ok := d.key()
			if !ok {
				return false
			}
			d.space()
			if !d.consume(':') {
				return false
			}
			d.space()
			switch key {
			case "abiVersion":
				if d.null() {
					break
				}
				n, ok := d.integer()
				if !ok {
					return false
				}
				version = n
			case "result":
				start := d.i
				if result, ok = d.value(1); !ok {
					return false
				}
				resultJSON = d.b[start:d.i]
			case "error":
				if d.null() {
					break
				}
				if d.peek() != '"' {
					return false
				}
				if errText, ok = d.str(); !ok {
					return false
				}
			default:
				return false
			}
			d.space()
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return false
		}
	}
	if !d.end() {
		return false
	}
	o.ABIVersion, o.Error, o.Result = version, errText, result
	o.resultJSON = nil
	if result != nil {
		// Kept for the order of its object keys (ToolCallOutput.ResultJSON).
		o.resultJSON = append([]byte(nil), resultJSON...)
	}
	return true
}

type fastDecoder struct {
	b []byte
	i int
	// keys are the object keys decoded so far, so that a key repeated
	// (the same field of each object in a list) is one string.
	keys  [8]string
	nkeys int
	// vals are short string values decoded so far, boxed: a value
	// repeated (the same word in each object of a list) is one string in
	// one interface, not two allocations each time.
	vals  [8]any
	nvals int
}

// maxSharedValue is the longest string value vals keeps.
const maxSharedValue = 32

func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (d *fastDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

func (d *fastDecoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *fastDecoder) consume(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

func (d *fastDecoder) null() bool { return d.literal("null") }

// value decodes any JSON value at nesting depth depth.
func (d *fastDecoder) value(depth int) (any, bool) {
	d.space()
	switch c := d.peek(); {
	case c == '"':
		return d.strValue()
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *fastDecoder) object(depth int) (any, bool) {
	if depth > fastMaxDepth {
		return nil, false
	}
	d.i++ // '{'
	m := map[string]any{}
	d.space()
	if d.consume('}') {
		return m, true
	}
	for {
		d.space()
		k, ok := d.key()
		if !ok {
			return nil, false
		}
		d.space()
		if !d.consume(':') {
			return nil, false
		}
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		d.space()
		if d.consume(',') {
			continue
		}
		if d.consume('}') {
			return m, true
		}
		return nil, false
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	if depth > fastMaxDepth {
		return nil, false
	}
	d.i++ // '['
	d.space()
	if d.consume(']') {
		return []any{}, true
	}
	// The elements gather on the stack, then go to a slice of their
	// number: one allocation, not one per doubling.
	var buf [8]any
	elems := buf[:0]
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		elems = append(elems, v)
		d.space()
		if d.consume(',') {
			continue
		}
		if d.consume(']') {
			return append([]any(nil), elems...), true
		}
		return nil, false
	}
}

// strValue decodes a string value at d.i, shared with an earlier equal
// one (vals) when it is short and plain.
func (d *fastDecoder) strValue() (any, bool) {
	if j := d.i + 1; j < len(d.b) {
		for _, v := range d.vals[:d.nvals] {
			k := v.(string)
			if end := j + len(k); end < len(d.b) && d.b[end] == '"' && string(d.b[j:end]) == k {
				d.i = end + 1
				return v, true
			}
		}
	}
	s, ok := d.str()
	if !ok {
		return nil, false
	}
	var v any = s
	if d.nvals < len(d.vals) && len(s) <= maxSharedValue && isPlainKey(s) {
		d.vals[d.nvals] = v
		d.nvals++
	}
	return v, true
}

func (d *fastDecoder) key() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	// A plain ASCII key seen before is the string already made.
	if j := d.i + 1; j < len(d.b) {
		for _, k := range d.keys[:d.nkeys] {
			if end := j + len(k); end < len(d.b) && d.b[end] == '"' && string(d.b[j:end]) == k {
				d.i = end + 1
				return k, true
			}
		}
	}
	k, ok := d.str()
	if ok && d.nkeys < len(d.keys) && isPlainKey(k) {
		d.keys[d.nkeys] = k
		d.nkeys++
	}
	return k, ok
}

// isPlainKey reports whether the JSON text of k is k between quotes: ASCII
// with nothing escaped, so that a match of its bytes is a match of the key.
func isPlainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// str decodes a string at d.i (a '"'). It gives up on invalid UTF-8 and on
// escaped surrogates that do not pair, which encoding/json replaces with
// U+FFFD.
func (d *fastDecoder) str() (string, bool) {
	b := d.b
	start := d.i + 1 // past '"'
	for i := start; i < len(b); {
		// Plain ASCII runs are skipped a table load a byte.
		for i < len(b) && plainInString[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			return string(b[start:i]), true
		case c == '\\':
			d.i = i
			return d.escapedStr(start)
		case c < 0x20:
			return "", false
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			i += n
		}
	}
	return "", false
}

// plainInString marks the bytes str takes as they are: ASCII but control
// characters, the quote and the backslash.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escapedStr finishes a string from start whose first escape is at d.i.
func (d *fastDecoder) escapedStr(start int) (string, bool) {
	out := make([]byte, 0, d.i-start+16)
	out = append(out, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), true
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return "", false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					if !d.literal(`\u`) {
						return "", false
					}
					r2, ok := d.hex4()
					if !ok {
						return "", false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", false
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			out = append(out, d.b[d.i:d.i+n]...)
			d.i += n
		}
	}
	return "", false
}

func (d *fastDecoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// number decodes a JSON number as exactNumbers converts a json.Number:
// int64 when strconv.ParseInt takes it, else float64 (±Inf past the
// float64 range, as there).
func (d *fastDecoder) number() (any, bool) {
	start := d.i
	d.consume('-')
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
	default:
		return nil, false
	}
	intEnd := d.i
	if d.consume('.') {
		if !d.digits() {
			return nil, false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	lit := d.b[start:d.i]
	if d.i == intEnd && len(lit) <= 18 {
		// Fits in int64 whatever the digits: what ParseInt returns.
		neg := lit[0] == '-'
		if neg {
			lit = lit[1:]
		}
		var n int64
		for _, c := range lit {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return n, true
	}
	// Only a literal without fraction or exponent can be an int64; asking
	// ParseInt about the others cost a *NumError each (a tool's float
	// results, which Rust and Python guests write as 21.0). The strings
	// are converted in the calls: neither escapes, so neither allocates.
	if d.i == intEnd {
		if n, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return n, true
		}
	}
	f, _ := strconv.ParseFloat(string(lit), 64)
	return f, true
}

func (d *fastDecoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// integer decodes an int field as encoding/json does: a number literal
// that strconv.ParseInt takes.
func (d *fastDecoder) integer() (int, bool) {
	v, ok := d.number()
	if !ok {
		return 0, false
	}
	n, isInt := v.(int64)
	if !isInt || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

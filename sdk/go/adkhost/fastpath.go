package adkhost

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

// The tool_call envelope without encoding/json. Compiled to WebAssembly,
// encoding/json costs far more than in Go (a state function called per
// input byte, two passes, reflection): decoding the envelope of a small
// tool call took about 100 µs in the guest. The host sends the envelope in
// one shape (abi.Encode of an abi.ToolCallInput), so splitting it into its
// raw fields by hand covers every real call; anything else (an escape in a
// key or a string, a key encoding/json would match case-insensitively, a
// malformed value) falls back to encoding/json, so the result is the same.

// splitObject calls field for each member of the JSON object data, with
// the key (without quotes) and the raw value. It returns false if data is
// not an object it can split: a key with an escape or a control character,
// or bad syntax. It is objectReader with a callback, for callers that keep
// no state between members.
func splitObject(data []byte, field func(key, value []byte) bool) bool {
	obj, ok := readObject(data, 0)
	if !ok {
		return false
	}
	for {
		key, done, ok := obj.next()
		if !ok {
			return false
		}
		if done {
			return skipSpace(data, obj.i) == len(data)
		}
		v, ok := obj.value()
		if !ok || !field(key, v) {
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && space(data[i]) {
		i++
	}
	return i
}

// space reports whether c is JSON white space.
func space(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipValue returns the end of the JSON value at i, or -1. It checks the
// structure (brackets, strings); encoding/json checks the rest when the
// value is decoded.
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			// bytes.IndexByte is assembly even in a guest, where a loop
			// over the bytes costs several times more.
			i++
			for {
				q := bytes.IndexByte(data[i:], '"')
				if q < 0 {
					return -1
				}
				// The quote is escaped if an odd number of backslashes
				// precede it.
				j, n := i+q, 0
				for k := j - 1; k >= i && data[k] == '\\'; k-- {
					n++
				}
				i = j + 1
				if n%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			if depth < 0 {
				return -1
			}
			i++
		case ',', ':':
			if depth == 0 {
				return -1
			}
			i++
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
			i++
		default:
			if depth == 0 {
				// A number or a literal: up to the next delimiter.
				start := i
				for i < len(data) && !delimiter(data[i]) {
					i++
				}
				if i == start {
					return -1
				}
				return i
			}
			i++
		}
		if depth == 0 {
			return i
		}
	}
	return -1
}

func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// plainString returns the contents of a JSON string without escapes.
func plainString(raw []byte) (string, bool) {
	if !plainBytes(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// plainBytes reports whether raw is a JSON string without escapes.
func plainBytes(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

// inputStrings hands out the strings of one input as substrings of a
// single copy of it: one allocation instead of one per field, which in a
// guest costs far more than in Go.
type inputStrings struct {
	data []byte
	all  string // string(data), made on first use
}

// plain is plainString for a value that lies within data.
func (c *inputStrings) plain(v []byte) (string, bool) {
	if !plainBytes(v) || !utf8.Valid(v) {
		return "", false // escapes; or bad UTF-8, which encoding/json replaces
	}
	return c.sub(v), true
}

// sub returns the contents of the string v, which has no escapes, as a
// substring of the copy of data if v lies within data.
func (c *inputStrings) sub(v []byte) string {
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(c.data))))
	if len(c.data) == 0 || off < 0 || off > len(c.data)-len(v) {
		return string(v[1 : len(v)-1]) // not within data
	}
	if c.all == "" {
		c.all = string(c.data)
	}
	return c.all[off+1 : off+len(v)-1]
}

// at decodes the JSON string at data[i] (not null) and returns the index
// after it.
func (c *inputStrings) at(i int) (string, int, bool) {
	if i >= len(c.data) || c.data[i] != '"' {
		return "", i, false
	}
	end, plain := scanString(c.data, i)
	if end < 0 {
		return "", i, false
	}
	if plain {
		return c.sub(c.data[i:end]), end, true
	}
	s, ok := c.text(c.data[i:end])
	return s, end, ok
}

// text is plain for a string that may have escapes.
func (c *inputStrings) text(v []byte) (string, bool) {
	if s, ok := c.plain(v); ok {
		return s, true
	}
	return unquote(v)
}

// unquote decodes a JSON string as encoding/json does, or reports false
// for what it leaves to encoding/json: invalid UTF-8 and surrogate
// escapes, which encoding/json replaces, and malformed strings.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if !utf8.Valid(s) {
		return "", false
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			if c < 0x20 || c == '"' {
				return "", false
			}
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if i+6 > len(s) {
				return "", false
			}
			r, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", false
			}
			b = utf8.AppendRune(b, rune(r))
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(b), true
}

// splitArray calls item for each element of the JSON array data, with
// the raw value. It returns false if data is not an array it can split.
func splitArray(data []byte, item func(value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		vend := skipValue(data, i)
		if vend < 0 || !item(data[i:vend]) {
			return false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// fastContent decodes into the zero *c a content whose parts have text
// only, the shape of a user's message, as json.Unmarshal would; it
// reports false for any other shape.
func fastContent(strs *inputStrings, raw []byte, c *abi.Content) bool {
	var role, parts bool
	return splitObject(raw, func(key, v []byte) bool {
		switch string(key) {
		case "role":
			if role { // a repeated key: left to encoding/json
				return false
			}
			role = true
			if string(v) == "null" {
				return true
			}
			s, ok := strs.text(v)
			c.Role = s
			return ok
		case "parts":
			if parts {
				return false
			}
			parts = true
			if string(v) == "null" {
				return true
			}
			c.Parts = []*abi.Part{} // [] is an empty slice, not nil
			return splitArray(v, func(item []byte) bool {
				if string(item) == "null" {
					c.Parts = append(c.Parts, nil)
					return true
				}
				p := new(abi.Part)
				c.Parts = append(c.Parts, p)
				return splitObject(item, func(k, pv []byte) bool {
					if string(k) != "text" {
						return false
					}
					if string(pv) == "null" {
						return true
					}
					s, ok := strs.text(pv)
					p.Text = s
					return ok
				})
			})
		}
		return false
	})
}

// decodeToolCallInput decodes a tool_call input as decode does.
func decodeToolCallInput(input []byte, in *toolCallInput) error {
	return decodeToolCall(&inputStrings{data: input}, in)
}

// decodeToolCall is decodeToolCallInput of strs.data; the strings of in
// are substrings of strs.
func decodeToolCall(strs *inputStrings, in *toolCallInput) error {
	input := strs.data
	if encodedToolCallInput(strs, in) {
		return nil
	}
	*in = toolCallInput{} // undo what it wrote before it gave up
	if readToolCallInput(strs, in) {
		return nil
	}
	// A separate variable, so that in stays on the caller's stack: only
	// this path hands it to encoding/json.
	var slow toolCallInput
	err := decode(input, &slow)
	*in = slow
	return err
}

// The input exactly as abi.Encode writes it (encoding/json's field order,
// no spaces), matched against its literal keys in order: a compiled Go
// guest runs several times slower when the host's own work between two
// calls has evicted it from the CPU's caches, as in an engine turn, and
// there the amount of guest code a call runs costs more than the bytes it
// scans. This path is one loop over the context's keys and one over the
// user message's parts, without a call per member. Anything else (another
// order, spaces, a null, a field it does not know, a confirmation) goes
// to fastToolCallInput.

// contextKeys are the string members of the context, in abi.Encode's
// order; the first five are always written, the others when not empty.
var contextKeys = [...]string{`{"appName":`, `,"userId":`, `,"sessionId":`, `,"invocationId":`, `,"agentName":`, `,"branch":`, `,"functionCallId":`}

const requiredContextKeys = 5

// encodedToolCallInput decodes input into the zero *in as json.Unmarshal
// would, if input is as abi.Encode writes it; false otherwise.
func encodedToolCallInput(strs *inputStrings, in *toolCallInput) bool {
	input := strs.data
	i, ok := literal(input, 0, `{"abiVersion":1,"context":`)
	if !ok {
		return false
	}
	info := &in.Context
	dst := [len(contextKeys)]*string{&info.AppName, &info.UserID, &info.SessionID, &info.InvocationID, &info.AgentName, &info.Branch, &info.FunctionCallID}
	for k, key := range contextKeys {
		j, ok := literal(input, i, key)
		if !ok {
			if k < requiredContextKeys {
				return false
			}
			continue
		}
		if *dst[k], i, ok = strs.at(j); !ok {
			return false
		}
	}
	if j, ok := literal(input, i, `,"userContent":`); ok {
		if info.UserContent, i, ok = encodedContent(strs, j); !ok {
			return false
		}
	}
	if i, ok = literal(input, i, `},"tool":`); !ok {
		return false
	}
	if in.Tool, i, ok = strs.at(i); !ok {
		return false
	}
	if i, ok = literal(input, i, `,"args":`); !ok {
		return false
	}
	end := skipValue(input, i)
	if end < 0 || end != len(input)-1 || input[end] != '}' {
		return false
	}
	if v := input[i:end]; string(v) != "null" {
		in.Args = v
	}
	in.ABIVersion = 1
	return true
}

// encodedContent decodes the user message at data[i:] if abi.Encode wrote
// it with a role and parts of text only (the shape of a user's message),
// and returns it and the index after it.
func encodedContent(strs *inputStrings, i int) (*abi.Content, int, bool) {
	data := strs.data
	i, ok := literal(data, i, `{"role":`)
	if !ok {
		return nil, i, false
	}
	// The message, its part list and its first part in one allocation.
	m := new(struct {
		c     abi.Content
		parts [1]*abi.Part
		part  abi.Part
	})
	if m.c.Role, i, ok = strs.at(i); !ok {
		return nil, i, false
	}
	if i, ok = literal(data, i, `,"parts":[`); !ok {
		return nil, i, false
	}
	m.parts[0] = &m.part
	m.c.Parts = m.parts[:0:1]
	for {
		if i, ok = literal(data, i, `{"text":`); !ok {
			return nil, i, false
		}
		p := &m.part
		if len(m.c.Parts) > 0 {
			p = new(abi.Part)
		}
		if p.Text, i, ok = strs.at(i); !ok {
			return nil, i, false
		}
		m.c.Parts = append(m.c.Parts, p)
		if i, ok = literal(data, i, `}`); !ok || i >= len(data) {
			return nil, i, false
		}
		switch data[i] {
		case ',':
			i++
			continue
		case ']':
			i, ok = literal(data, i+1, `}`)
			return &m.c, i, ok
		}
		return nil, i, false
	}
}

// literal reports whether data[i:] starts with s, and returns the index
// after it. It compares eight bytes at a time: in a guest, Go's memequal
// is a loop over single bytes, each paying its interrupt check, and the
// envelope's keys are a few hundred bytes per call.
func literal(data []byte, i int, s string) (int, bool) {
	n := len(s)
	if i < 0 || len(data)-i < n {
		return i, false
	}
	d := data[i : i+n]
	if n < 8 {
		if string(d) != s {
			return i, false
		}
		return i + n, true
	}
	for k := 0; k < n-8; k += 8 {
		if load64(d, k) != load64String(s, k) {
			return i, false
		}
	}
	// The last eight bytes, which may overlap the words before.
	if load64(d, n-8) != load64String(s, n-8) {
		return i, false
	}
	return i + n, true
}

// fastToolCallInput reads the envelope in one pass, without a callback per
// member: in a guest, every byte scanned again and every call costs (the
// context alone took 6 µs with splitObject).
func fastToolCallInput(input []byte, in *toolCallInput) bool {
	return readToolCallInput(&inputStrings{data: input}, in)
}

// readToolCallInput is fastToolCallInput of strs.data.
func readToolCallInput(strs *inputStrings, in *toolCallInput) bool {
	input := strs.data
	obj, ok := readObject(input, 0)
	if !ok {
		return false
	}
	version, context := false, false
	for {
		key, done, ok := obj.next()
		if !ok {
			return false
		}
		if done {
			return version && skipSpace(input, obj.i) == len(input)
		}
		switch string(key) {
		case "abiVersion":
			v, ok := obj.value()
			if !ok || string(v) != "1" {
				return false
			}
			version, in.ABIVersion = true, 1
		case "tool":
			v, plain, ok := obj.str()
			if !ok || v == nil {
				return false
			}
			if plain {
				in.Tool = strs.sub(v)
			} else if in.Tool, ok = strs.text(v); !ok {
				return false
			}
		case "args":
			v, ok := obj.value()
			if !ok {
				return false
			}
			if string(v) != "null" {
				in.Args = v
			}
		case "context":
			if context { // a repeated key: encoding/json would merge both
				return false
			}
			context = true
			if !readInvocationInfo(strs, &obj, &in.Context) {
				return false
			}
		case "confirmation":
			v, ok := obj.value()
			if !ok {
				return false
			}
			if string(v) != "null" {
				in.Confirmation = new(abi.ToolConfirmation)
				if json.Unmarshal(v, in.Confirmation) != nil {
					return false
				}
			}
		default:
			return false
		}
	}
}

// readInvocationInfo decodes the context object (or null) at the value
// obj is at into the zero *info, as json.Unmarshal would, and moves obj
// past it.
func readInvocationInfo(strs *inputStrings, obj *objectReader, info *abi.InvocationInfo) bool {
	if obj.null() {
		return true
	}
	ctx, ok := readObject(obj.data, obj.i)
	if !ok {
		return false
	}
	for {
		key, done, ok := ctx.next()
		if !ok {
			return false
		}
		if done {
			obj.i = ctx.i
			return true
		}
		var dst *string
		switch string(key) {
		case "appName":
			dst = &info.AppName
		case "userId":
			dst = &info.UserID
		case "sessionId":
			dst = &info.SessionID
		case "invocationId":
			dst = &info.InvocationID
		case "agentName":
			dst = &info.AgentName
		case "branch":
			dst = &info.Branch
		case "functionCallId":
			dst = &info.FunctionCallID
		case "userContent":
			v, ok := ctx.value()
			if !ok {
				return false
			}
			if string(v) == "null" {
				continue
			}
			// The user's message reaches every tool call: through
			// encoding/json it cost a guest about 30 µs.
			if c := new(abi.Content); fastContent(strs, v, c) {
				info.UserContent = c
			} else if info.UserContent, ok = unmarshalContent(v); !ok {
				return false
			}
			continue
		default:
			return false
		}
		v, plain, ok := ctx.str()
		switch {
		case !ok:
			return false
		case v == nil: // null leaves the field as it is
		case plain:
			*dst = strs.sub(v)
		default:
			if *dst, ok = strs.text(v); !ok {
				return false
			}
		}
	}
}

// unmarshalContent is json.Unmarshal into a *abi.Content, apart so that
// the caller's variables stay on its stack.
func unmarshalContent(v []byte) (*abi.Content, bool) {
	var c *abi.Content
	err := json.Unmarshal(v, &c)
	return c, err == nil
}

// objectReader reads the members of a JSON object in one pass.
type objectReader struct {
	data    []byte
	i       int // after next: the member's value; after the last: past '}'
	started bool
}

// readObject starts reading the object at data[i:], after spaces.
func readObject(data []byte, i int) (objectReader, bool) {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
		return objectReader{}, false
	}
	return objectReader{data: data, i: i + 1}, true
}

// next moves to the next member and returns its key (without quotes),
// leaving the reader at the value, which the caller must read. done is
// true after the closing brace; ok is false for bad syntax or a key with
// an escape.
func (r *objectReader) next() (key []byte, done, ok bool) {
	d := r.data
	i := skipSpace(d, r.i)
	if i >= len(d) {
		return nil, false, false
	}
	if d[i] == '}' {
		// After a member, or in an empty object; not after a comma.
		r.i = i + 1
		return nil, true, true
	}
	if r.started {
		if d[i] != ',' {
			return nil, false, false
		}
		i = skipSpace(d, i+1)
	}
	r.started = true
	if i >= len(d) || d[i] != '"' {
		return nil, false, false
	}
	end, plain := scanString(d, i)
	if end < 0 || (!plain && !plainBytes(d[i:end])) { // non-ASCII is fine
		return nil, false, false
	}
	key = d[i+1 : end-1]
	i = skipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return nil, false, false
	}
	r.i = skipSpace(d, i+1)
	return key, false, true
}

// value returns the raw value the reader is at and moves past it.
func (r *objectReader) value() ([]byte, bool) {
	end := skipValue(r.data, r.i)
	if end < 0 {
		return nil, false
	}
	v := r.data[r.i:end]
	r.i = end
	return v, true
}

// null moves past a null value, and reports whether there was one.
func (r *objectReader) null() bool {
	d := r.data[r.i:]
	if len(d) >= 4 && string(d[:4]) == "null" && (len(d) == 4 || delimiter(d[4])) {
		r.i += 4
		return true
	}
	return false
}

// str reads a string or null value: raw is the string with its quotes, nil
// for null; plain reports that it has no escapes and only ASCII, so its
// contents are its value as they are.
func (r *objectReader) str() (raw []byte, plain, ok bool) {
	if r.null() {
		return nil, false, true
	}
	if r.i >= len(r.data) || r.data[r.i] != '"' {
		return nil, false, false
	}
	end, plain := scanString(r.data, r.i)
	if end < 0 {
		return nil, false, false
	}
	raw = r.data[r.i:end]
	r.i = end
	return raw, plain, true
}

// scanString returns the index after the closing quote of the JSON string
// at data[i] (a quote), or -1; plain reports no escapes, no control
// characters and only ASCII. One pass, eight bytes at a time while none of
// them is a quote, a backslash, a control character or non-ASCII: in a
// guest every iteration of a byte loop pays its bounds and interrupt
// checks, and scanning the input's strings was a fifth of a tool call.
func scanString(data []byte, i int) (end int, plain bool) {
	plain = true
	i++
	for {
		for i+8 <= len(data) && !specialByte(load64(data, i)) {
			i += 8
		}
		if i >= len(data) {
			return -1, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			plain = false
			i += 2 // the escaped byte, which may be a quote
			continue
		case c < 0x20 || c >= utf8.RuneSelf:
			plain = false
		}
		i++
	}
}

// specialByte reports whether one of the eight bytes of x is a quote, a
// backslash, below 0x20 or above 0x7f (the classic SWAR tests: a byte is
// zero, or less than n, exactly when the subtraction borrows into its high
// bit and its own high bit was clear).
func specialByte(x uint64) bool {
	return zeroByte(x^(swarOnes*'"'))|zeroByte(x^(swarOnes*'\\'))|(x-swarOnes*0x20)&^x&swarHighs|x&swarHighs != 0
}

// load64 reads data[i:i+8] (in bounds) as one word (in either byte order:
// specialByte only asks whether any byte is special); a single
// i64.load in WebAssembly, where binary.LittleEndian.Uint64 is eight byte
// loads.
func load64(data []byte, i int) uint64 {
	_ = data[i+7]
	return *(*uint64)(unsafe.Pointer(&data[i]))
}

const swarOnes, swarHighs = 0x0101010101010101, 0x8080808080808080

// zeroByte is nonzero when a byte of v is zero.
func zeroByte(v uint64) uint64 { return (v - swarOnes) & ^v & swarHighs }

// missingRequired returns the first of names that the argument object raw
// lacks or has as null; ok is false if raw cannot be read.
func missingRequired(raw []byte, names []string) (missing string, ok bool) {
	if len(names) > 64 {
		return "", false // more than found holds: left to encoding/json
	}
	var found uint64 // bit i: names[i] is present and not null
	obj, ok := readObject(raw, 0)
	if !ok {
		return "", false
	}
	for {
		key, done, ok := obj.next()
		if !ok {
			return "", false
		}
		if done {
			break
		}
		v, ok := obj.value()
		if !ok {
			return "", false
		}
		if string(v) == "null" {
			continue
		}
		for i, n := range names {
			if string(key) == n {
				found |= 1 << i
			}
		}
	}
	if skipSpace(raw, obj.i) != len(raw) {
		return "", false
	}
	for i, n := range names {
		if found&(1<<i) == 0 {
			return n, true
		}
	}
	return "", true
}

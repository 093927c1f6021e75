package abi

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendToolCallInput appends m as encoding/json encodes it, byte for
// byte (FuzzEncodeToolCallInput checks), without reflection: a tool_call
// input is encoded on every Wasm tool call, and json.Marshal took about 6
// allocations and as many instructions as the decode of the output. It
// reports false for what it leaves to encoding/json: argument values of
// other types than JSON's own (string, float64, int64 and the other Go
// integers, bool, nil, map[string]any, []any), and numbers JSON cannot hold.
func appendToolCallInput(b []byte, m *ToolCallInput) ([]byte, bool) {
	b = append(b, `{"abiVersion":`...)
	b = strconv.AppendInt(b, int64(m.ABIVersion), 10)
	b = append(b, `,"context":`...)
	b = appendInvocationInfo(b, &m.Context)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, m.Tool)
	b = append(b, `,"args":`...)
	var ok bool
	if b, ok = appendMap(b, m.Args, 0); !ok {
		return b, false
	}
	if m.Confirmation != nil {
		c, err := json.Marshal(m.Confirmation)
		if err != nil {
			return b, false
		}
		b = append(b, `,"confirmation":`...)
		b = append(b, c...)
	}
	return append(b, '}'), true
}

func appendInvocationInfo(b []byte, i *InvocationInfo) []byte {
	b = append(b, `{"appName":`...)
	b = appendJSONString(b, i.AppName)
	b = append(b, `,"userId":`...)
	b = appendJSONString(b, i.UserID)
	b = append(b, `,"sessionId":`...)
	b = appendJSONString(b, i.SessionID)
	b = append(b, `,"invocationId":`...)
	b = appendJSONString(b, i.InvocationID)
	b = append(b, `,"agentName":`...)
	b = appendJSONString(b, i.AgentName)
	if i.Branch != "" {
		b = append(b, `,"branch":`...)
		b = appendJSONString(b, i.Branch)
	}
	if i.FunctionCallID != "" {
		b = append(b, `,"functionCallId":`...)
		b = appendJSONString(b, i.FunctionCallID)
	}
	if c := i.UserContent; c != nil {
		b = append(b, `,"userContent":{`...)
		sep := false
		if c.Role != "" {
			b = append(b, `"role":`...)
			b = appendJSONString(b, c.Role)
			sep = true
		}
		if len(c.Parts) > 0 {
			if sep {
				b = append(b, ',')
			}
			b = append(b, `"parts":[`...)
			for k, p := range c.Parts {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendPart(b, p)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendPart writes a text part itself and leaves any other to
// encoding/json (a Part's fields encode without error).
func appendPart(b []byte, p *Part) []byte {
	switch {
	case p == nil:
		return append(b, "null"...)
	case p.ThoughtSignature == nil && p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil &&
		p.FunctionResponse == nil && p.ExecutableCode == nil && p.CodeExecutionResult == nil && p.VideoMetadata == nil:
		b = append(b, '{')
		if p.Text != "" {
			b = append(b, `"text":`...)
			b = appendJSONString(b, p.Text)
		}
		if p.Thought {
			if p.Text != "" {
				b = append(b, ',')
			}
			b = append(b, `"thought":true`...)
		}
		return append(b, '}')
	}
	j, err := json.Marshal(p)
	if err != nil {
		return append(b, "null"...) // unreachable: a Part always encodes
	}
	return append(b, j...)
}

// maxFastDepth bounds the nesting appendValue follows; deeper values go
// to encoding/json, which has its own bound.
const maxFastDepth = 64

func appendMap(b []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if depth > maxFastDepth {
		return b, false
	}
	// encoding/json sorts the keys.
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendValue(b, m[k], depth+1); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendValue(b []byte, v any, depth int) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case float64:
		return appendFloat(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int32:
		return strconv.AppendInt(b, int64(v), 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	case map[string]any:
		return appendMap(b, v, depth)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		if depth > maxFastDepth {
			return b, false
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValue(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendFloat formats f as encoding/json does: the shortest
// representation, in exponent form below 1e-6 and from 1e21 on, with a
// one-digit negative exponent written without its leading zero.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes encoding/json writes in a string as they are:
// printable ASCII but '"', '\\' and the HTML-escaped '<', '>' and '&'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString quotes s as encoding/json does by default: HTML
// characters, control characters, U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most strings are plain ASCII: one table load per byte (the
		// five comparisons of each byte were a tenth of a Wasm tool call's
		// host-side instructions).
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

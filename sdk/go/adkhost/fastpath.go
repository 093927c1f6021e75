package adkhost

import (
	"bytes"
	"encoding/json"
	"strconv"

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
// not an object it can split: a key with an escape, or bad syntax.
func splitObject(data []byte, field func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := bytes.IndexByte(data[i+1:], '"')
		if end < 0 {
			return false
		}
		key := data[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, i+2+end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		vend := skipValue(data, i)
		if vend < 0 || !field(key, data[i:vend]) {
			return false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value at i, or -1. It checks the
// structure (brackets, strings); encoding/json checks the rest when the
// value is decoded.
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(data) {
				return -1
			}
			i++
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
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return "", false
		}
	}
	return string(s), true
}

// decodeToolCallInput decodes a tool_call input as decode does.
func decodeToolCallInput(input []byte, in *toolCallInput) error {
	if fastToolCallInput(input, in) {
		return nil
	}
	*in = toolCallInput{}
	return decode(input, in)
}

func fastToolCallInput(input []byte, in *toolCallInput) bool {
	version := false
	ok := splitObject(input, func(key, v []byte) bool {
		switch string(key) {
		case "abiVersion":
			version = string(v) == "1"
			in.ABIVersion = 1
			return version
		case "tool":
			s, ok := plainString(v)
			in.Tool = s
			return ok
		case "args":
			if string(v) != "null" {
				in.Args = v
			}
			return true
		case "context":
			return fastInvocationInfo(v, &in.Context)
		case "confirmation":
			if string(v) == "null" {
				return true
			}
			in.Confirmation = new(abi.ToolConfirmation)
			return json.Unmarshal(v, in.Confirmation) == nil
		}
		return false
	})
	return ok && version
}

func fastInvocationInfo(raw []byte, info *abi.InvocationInfo) bool {
	if string(raw) == "null" {
		return true
	}
	return splitObject(raw, func(key, v []byte) bool {
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
			if string(v) == "null" {
				return true
			}
			return json.Unmarshal(v, &info.UserContent) == nil
		default:
			return false
		}
		if string(v) == "null" {
			return true
		}
		s, ok := plainString(v)
		*dst = s
		return ok
	})
}

// missingRequired returns the first of names that the argument object raw
// lacks or has as null; ok is false if raw cannot be split.
func missingRequired(raw []byte, names []string) (missing string, ok bool) {
	found := make([]bool, len(names))
	if !splitObject(raw, func(key, v []byte) bool {
		for i, n := range names {
			if string(key) == n && string(v) != "null" {
				found[i] = true
			}
		}
		return true
	}) {
		return "", false
	}
	for i, f := range found {
		if !f {
			return names[i], true
		}
	}
	return "", true
}

// rawToolCallOutput is a tool_call output whose result is JSON an encoder
// produced; it is written without encoding/json re-checking it.
type rawToolCallOutput struct {
	abi.Header
	result json.RawMessage
}

func (o *rawToolCallOutput) appendJSON(b []byte) []byte {
	b = append(b, `{"abiVersion":`...)
	b = strconv.AppendInt(b, int64(abi.Version), 10)
	if len(o.result) > 0 {
		b = append(b, `,"result":`...)
		b = append(b, o.result...)
	}
	return append(b, '}')
}

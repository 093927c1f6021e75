package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// DefaultMaxMessageBytes is the size limit Decode applies when given none.
const DefaultMaxMessageBytes = 4 << 20

// Codec errors, wrapped with details by Decode and DecodeValue.
var (
	// ErrTooLarge: the message exceeds the size limit.
	ErrTooLarge = errors.New("abi: message too large")
	// ErrMalformed: not a single JSON value of the expected shape, or it
	// has a field the ABI does not define.
	ErrMalformed = errors.New("abi: malformed message")
	// ErrVersion: abiVersion is missing or not Version.
	ErrVersion = errors.New("abi: unsupported abiVersion")
)

// Encode returns m as JSON, setting its abiVersion to Version if it is
// zero. It fails for any other abiVersion.
func Encode(m Message) ([]byte, error) { return AppendEncode(nil, m) }

// AppendEncode is Encode appending to dst, so a caller can reuse a buffer.
// The bytes are encoding/json's; a ToolCallInput, encoded on every tool
// call, is written without reflection and without allocating beyond dst's
// growth.
func AppendEncode(dst []byte, m Message) ([]byte, error) {
	h := m.ABIHeader()
	switch h.ABIVersion {
	case 0:
		h.ABIVersion = Version
	case Version:
	default:
		return dst, fmt.Errorf("%w: cannot encode abiVersion %d, this package speaks %d", ErrVersion, h.ABIVersion, Version)
	}
	if in, ok := m.(*ToolCallInput); ok {
		if b, ok := appendToolCallInput(dst, in); ok {
			return b, nil
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// Decode decodes a message strictly: data must be at most maxBytes long
// (DefaultMaxMessageBytes when maxBytes <= 0), hold exactly one JSON object
// with no field the message type does not define, and carry abiVersion
// Version. Field names match as encoding/json matches them; senders must use
// the exact names.
func Decode(data []byte, m Message, maxBytes int) error {
	if err := DecodeValue(data, m, maxBytes); err != nil {
		return err
	}
	switch v := m.ABIHeader().ABIVersion; v {
	case Version:
		return nil
	case 0:
		return fmt.Errorf("%w: abiVersion is missing, want %d", ErrVersion, Version)
	default:
		return fmt.Errorf("%w: abiVersion is %d, want %d", ErrVersion, v, Version)
	}
}

// DecodeValue is Decode without the abiVersion check, for values that are
// not messages: a Part passed to artifact_save, an HTTPRequest, a Describe
// field.
func DecodeValue(data []byte, v any, maxBytes int) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	if len(data) > maxBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), maxBytes)
	}
	if !decodeFast(data, v) {
		if err := decodeStrict(data, v); err != nil {
			return err
		}
	}
	return nil
}

// decodeStrict is DecodeValue's decoder for everything decodeFast leaves:
// encoding/json, refusing unknown fields, then exactNumbers. It decides and
// words every error.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return fmt.Errorf("%w: empty", ErrMalformed)
		}
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON value at offset %d", ErrMalformed, end)
	}
	exactNumbers(reflect.ValueOf(v))
	if k, ok := v.(rawKeeper); ok {
		k.keepRaw(data)
	}
	return nil
}

// rawKeeper is a message that keeps part of its JSON text (ToolCallOutput
// its result's, for the order of its object keys).
type rawKeeper interface{ keepRaw(data []byte) }

// exactNumbers replaces the json.Number values that UseNumber leaves in
// untyped places (any, map[string]any, []any) with int64 for integers and
// float64 otherwise, as Python's json.loads keeps ints: a guest's 21 stays
// 21, not 21.0, all the way to the model and the session.
func exactNumbers(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			exactNumbers(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				exactNumbers(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			exactNumbers(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.Interface {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			if e := iter.Value(); !e.IsNil() {
				v.SetMapIndex(iter.Key(), reflect.ValueOf(numberTree(e.Interface())))
			}
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			v.Set(reflect.ValueOf(numberTree(v.Elem().Interface())))
		}
	}
}

// numberTree converts the json.Number values of a decoded JSON tree.
func numberTree(x any) any {
	switch t := x.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numberTree(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numberTree(e)
		}
	}
	return x
}

// ErrInvalidDescribe wraps every problem Validate finds in a Describe.
var ErrInvalidDescribe = errors.New("abi: invalid describe message")

// Validate checks a Describe: a valid module name; tools with valid,
// distinct names and object parameter schemas; known, distinct hooks with
// tool_call listed exactly when there are tools; known, distinct
// capabilities. It does not check that the hooks are exported: the loader
// does.
func (d *Describe) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidDescribe, fmt.Sprintf(format, args...))
	}
	if d.ABIVersion != Version {
		return bad("abiVersion is %d, want %d", d.ABIVersion, Version)
	}
	if !ValidName(d.Name) {
		return bad("module name %q is not a valid name (a letter or underscore, then letters, digits, '_', '.', '-'; 64 bytes at most)", d.Name)
	}
	tools := map[string]bool{}
	for i, t := range d.Tools {
		if !ValidName(t.Name) {
			return bad("tools[%d]: name %q is not a valid function name (a letter or underscore, then letters, digits, '_', '.', '-'; 64 bytes at most)", i, t.Name)
		}
		if tools[t.Name] {
			return bad("tools[%d]: tool %q is declared twice", i, t.Name)
		}
		tools[t.Name] = true
		if t.Parameters != nil {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
				return bad("tool %q: parameters must be a JSON Schema object", t.Name)
			}
			if typ, ok := schema["type"]; ok && typ != "object" {
				return bad("tool %q: parameters schema has type %v, want \"object\"", t.Name, typ)
			}
		}
		if t.Response != nil {
			var schema map[string]any
			if err := json.Unmarshal(t.Response, &schema); err != nil || schema == nil {
				return bad("tool %q: response must be a JSON Schema object", t.Name)
			}
		}
	}
	seen := map[Hook]bool{}
	for _, h := range d.Hooks {
		if !h.Known() {
			return bad("unknown hook %q (ABI v%d hooks: %s)", h, Version, hookList())
		}
		if seen[h] {
			return bad("hook %q is listed twice", h)
		}
		seen[h] = true
	}
	switch {
	case len(d.Tools) > 0 && !seen[HookToolCall]:
		return bad("declares %d tools but not the %q hook that runs them", len(d.Tools), HookToolCall)
	case len(d.Tools) == 0 && seen[HookToolCall]:
		return bad("lists the %q hook but declares no tools", HookToolCall)
	}
	caps := map[Capability]bool{}
	for _, c := range d.Capabilities {
		if !c.Known() {
			return bad("unknown capability %q", c)
		}
		if caps[c] {
			return bad("capability %q is listed twice", c)
		}
		caps[c] = true
	}
	return nil
}

// Tool returns the declaration of the named tool.
func (d *Describe) Tool(name string) (ToolDecl, bool) {
	for _, t := range d.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolDecl{}, false
}

// Implements reports whether the module lists hook h.
func (d *Describe) Implements(h Hook) bool {
	for _, x := range d.Hooks {
		if x == h {
			return true
		}
	}
	return false
}

// Asks reports whether the module asks for capability c.
func (d *Describe) Asks(c Capability) bool {
	for _, x := range d.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

func hookList() string {
	names := make([]string, len(hooks))
	for i, h := range hooks {
		names[i] = string(h)
	}
	return strings.Join(names, ", ")
}

// ValidName reports whether s is a valid module or tool name: a letter or
// underscore, then letters, digits, underscores, dots or dashes, 64 bytes at
// most (the rule Gemini applies to function names).
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// State key prefixes (google-adk's State.APP_PREFIX, USER_PREFIX,
// TEMP_PREFIX). A key without one of them belongs to the session.
const (
	StatePrefixApp  = "app:"
	StatePrefixUser = "user:"
	StatePrefixTemp = "temp:"
)

// MaxStateKeyBytes bounds the length of a state key.
const MaxStateKeyBytes = 256

// ValidStateKey reports whether key may be read or written: non-empty, valid
// UTF-8, at most MaxStateKeyBytes, and not a bare prefix such as "app:".
func ValidStateKey(key string) bool {
	if key == "" || len(key) > MaxStateKeyBytes || !utf8.ValidString(key) {
		return false
	}
	switch key {
	case StatePrefixApp, StatePrefixUser, StatePrefixTemp:
		return false
	}
	return true
}

package postgres

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
)

// rewrite appends src, a JSON value typed t, to dst with the keys that
// name struct fields renamed to Python's names (toPython) or to the Go
// JSON names, and []byte strings in the other base64 alphabet, in one
// pass along t; keys unknown to t, free-form dicts (maps of interface
// values, interface values) and everything else stay as written, key
// order included. Whitespace between tokens is dropped; src is checked
// as it is read, so invalid JSON is an error.
func rewrite(dst, src []byte, t reflect.Type, toPython bool) ([]byte, error) {
	r := rewriter{src: src, toPython: toPython}
	dst, err := r.value(dst, t, 0)
	if err != nil {
		return nil, err
	}
	if r.skipSpace(); r.i != len(src) {
		return nil, errJSONSyntax
	}
	return dst, nil
}

var errJSONSyntax = errors.New("invalid JSON")

type rewriter struct {
	src      []byte
	i        int
	toPython bool
}

func (r *rewriter) skipSpace() {
	for r.i < len(r.src) {
		switch r.src[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// value rewrites the value at r.i, typed t (nil: copied as it is).
func (r *rewriter) value(dst []byte, t reflect.Type, depth int) ([]byte, error) {
	r.skipSpace()
	if r.i >= len(r.src) {
		return nil, errJSONSyntax
	}
	if depth > maxJSONDepth {
		t = nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c := r.src[r.i]
	switch {
	case t == nil:
	case c == '{' && t.Kind() == reflect.Struct:
		return r.object(dst, structFields(t), nil, depth)
	case c == '{' && t.Kind() == reflect.Map && t.Elem().Kind() != reflect.Interface:
		return r.object(dst, nil, t.Elem(), depth)
	case c == '"' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() == reflect.Uint8:
		start := len(dst)
		dst, err := r.copyValue(dst)
		if err != nil {
			return nil, err
		}
		return base64AlphabetJSON(dst, start, r.toPython), nil
	case c == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8:
		return r.array(dst, t.Elem(), depth)
	}
	return r.copyValue(dst)
}

// object rewrites an object: a struct's fields (si) or a map's values
// typed elem.
func (r *rewriter) object(dst []byte, si *structInfo, elem reflect.Type, depth int) ([]byte, error) {
	r.i++ // {
	dst = append(dst, '{')
	for first := true; ; first = false {
		r.skipSpace()
		if r.i < len(r.src) && r.src[r.i] == '}' && first {
			r.i++
			return append(dst, '}'), nil
		}
		if !first {
			dst = append(dst, ',')
		}
		keyStart := r.i
		if r.i >= len(r.src) || r.src[r.i] != '"' {
			return nil, errJSONSyntax
		}
		if err := r.skipString(); err != nil {
			return nil, err
		}
		key := r.src[keyStart:r.i]
		vt := elem
		if si != nil {
			vt = nil
			if fi := si.field(key); fi != nil {
				name := fi.json
				if r.toPython {
					name = fi.python
				}
				key = append(append([]byte{'"'}, name...), '"')
				vt = fi.typ
			}
		}
		dst = append(dst, key...)
		r.skipSpace()
		if r.i >= len(r.src) || r.src[r.i] != ':' {
			return nil, errJSONSyntax
		}
		r.i++
		dst = append(dst, ':')
		var err error
		if dst, err = r.value(dst, vt, depth+1); err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.i >= len(r.src) {
			return nil, errJSONSyntax
		}
		switch r.src[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return append(dst, '}'), nil
		default:
			return nil, errJSONSyntax
		}
	}
}

func (r *rewriter) array(dst []byte, elem reflect.Type, depth int) ([]byte, error) {
	r.i++ // [
	dst = append(dst, '[')
	for first := true; ; first = false {
		r.skipSpace()
		if r.i < len(r.src) && r.src[r.i] == ']' && first {
			r.i++
			return append(dst, ']'), nil
		}
		if !first {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = r.value(dst, elem, depth+1); err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.i >= len(r.src) {
			return nil, errJSONSyntax
		}
		switch r.src[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return append(dst, ']'), nil
		default:
			return nil, errJSONSyntax
		}
	}
}

// field finds a struct field by its JSON or Python name, key being the
// quoted key as written.
func (si *structInfo) field(key []byte) *fieldInfo {
	name := key[1 : len(key)-1]
	for _, c := range name {
		if c == '\\' {
			var s string
			if json.Unmarshal(key, &s) != nil {
				return nil
			}
			name = []byte(s)
			break
		}
	}
	if fi := si.byJSON[string(name)]; fi != nil {
		return fi
	}
	return si.byPython[string(name)]
}

// copyValue appends the value at r.i as written, checked by json.Valid's
// rules only as far as finding its end needs.
func (r *rewriter) copyValue(dst []byte) ([]byte, error) {
	start := r.i
	if err := r.skipValue(0); err != nil {
		return nil, err
	}
	return appendCompact(dst, r.src[start:r.i])
}

// appendCompact appends a value without the whitespace between tokens.
func appendCompact(dst, v []byte) ([]byte, error) {
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString:
			if c == '\\' {
				dst = append(dst, c, v[i+1])
				i++
				continue
			}
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		dst = append(dst, c)
	}
	return dst, nil
}

func (r *rewriter) skipValue(depth int) error {
	r.skipSpace()
	if r.i >= len(r.src) || depth > 10000 {
		return errJSONSyntax
	}
	switch c := r.src[r.i]; c {
	case '"':
		return r.skipString()
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		r.i++
		for first := true; ; first = false {
			r.skipSpace()
			if r.i < len(r.src) && r.src[r.i] == end && first {
				r.i++
				return nil
			}
			if c == '{' {
				if r.i >= len(r.src) || r.src[r.i] != '"' {
					return errJSONSyntax
				}
				if err := r.skipString(); err != nil {
					return err
				}
				r.skipSpace()
				if r.i >= len(r.src) || r.src[r.i] != ':' {
					return errJSONSyntax
				}
				r.i++
			}
			if err := r.skipValue(depth + 1); err != nil {
				return err
			}
			r.skipSpace()
			if r.i >= len(r.src) {
				return errJSONSyntax
			}
			switch r.src[r.i] {
			case ',':
				r.i++
			case end:
				r.i++
				return nil
			default:
				return errJSONSyntax
			}
		}
	default:
		// A number or a literal: up to the next delimiter.
		start := r.i
		for r.i < len(r.src) {
			switch r.src[r.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			}
			r.i++
		}
	done:
		if !json.Valid(r.src[start:r.i]) {
			return errJSONSyntax
		}
		return nil
	}
}

// skipString moves past the string at r.i, checking its escapes.
func (r *rewriter) skipString() error {
	for r.i++; r.i < len(r.src); r.i++ {
		switch c := r.src[r.i]; {
		case c == '\\':
			r.i++
			if r.i >= len(r.src) {
				return errJSONSyntax
			}
			switch r.src[r.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if r.i+4 >= len(r.src) {
					return errJSONSyntax
				}
				for _, h := range r.src[r.i+1 : r.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return errJSONSyntax
					}
				}
				r.i += 4
			default:
				return errJSONSyntax
			}
		case c == '"':
			r.i++
			return nil
		case c < 0x20:
			return errJSONSyntax
		}
	}
	return errJSONSyntax
}

// base64AlphabetJSON is base64Alphabet on the JSON string dst[start:], in
// place where it can.
func base64AlphabetJSON(dst []byte, start int, toURL bool) []byte {
	s := dst[start+1 : len(dst)-1]
	if toURL && !bytes.Contains(s, []byte{'\\'}) {
		for i, c := range s {
			switch c {
			case '+':
				s[i] = '-'
			case '/':
				s[i] = '_'
			}
		}
		return dst
	}
	// Escaped or padded: by way of a Go string.
	var plain string
	if json.Unmarshal(dst[start:], &plain) != nil {
		return dst
	}
	b, _ := json.Marshal(base64Alphabet(plain, toURL))
	return append(dst[:start], b...)
}

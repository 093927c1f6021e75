// Package keyorder keeps the order of JSON object keys beside the Go maps
// that lost it. Python dicts keep insertion order, and google-adk formats
// dicts into text (another agent's call args and results, state injected
// into instructions) in that order; Go maps have none. A value decoded from
// JSON is therefore carried as the plain Go value plus a hint: the JSON it
// came from, reduced to its skeleton (keys and nesting, every scalar
// written 0), and only when some object in it has its keys out of sorted
// order, since sorted order is what a hint-less value prints in anyway.
//
// A hint is advisory: readers walk the Go value and, at each map, take the
// hint's order only when the hint has an object there with exactly the
// map's keys; anywhere else (the value was changed since, or the hint is
// stale or malformed) keys are sorted. A hint can thus make the order
// wrong only where a caller replaced a map by another with the same keys,
// and never the values.
package keyorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Tree is the parsed skeleton of a JSON value: for an object its keys in
// order with the subtree of each, for a list the subtree of each item. A
// nil *Tree stands for a scalar, or for no knowledge at all; its methods
// accept a nil receiver.
type Tree struct {
	obj bool
	// keys and fields: an object's keys in order and their subtrees (fields
	// is nil when no value is a container). An object with a duplicate key
	// parses as nil: which value such a key keeps differs between decoders.
	keys   []string
	fields []*Tree
	// items: a list's subtrees (nil when no item is a container).
	items []*Tree
	// unsorted: some object in the tree has keys out of sorted order.
	unsorted bool
}

// maxDepth bounds the nesting Parse follows (encoding/json's own limit);
// deeper values get no hint.
const maxDepth = 10000

// Parse parses raw JSON (a hint or any JSON text) into a Tree. It returns
// nil for a scalar or for text that is not valid JSON.
func Parse(raw []byte) *Tree {
	p := parser{b: raw}
	t, ok := p.value(0)
	if !ok {
		return nil
	}
	p.space()
	if p.i != len(p.b) {
		return nil
	}
	return t
}

// Order returns the keys of m in the hint's order, with the subtree of
// each, when t is an object whose keys are exactly m's; otherwise nil, nil.
func (t *Tree) Order(m map[string]any) ([]string, []*Tree) {
	if t == nil || !t.obj || len(t.keys) != len(m) {
		return nil, nil
	}
	for _, k := range t.keys {
		if _, ok := m[k]; !ok {
			return nil, nil
		}
	}
	return t.keys, t.fields
}

// Keys returns the keys of an object in order (nil for anything else). The
// slice must not be modified.
func (t *Tree) Keys() []string {
	if t == nil || !t.obj {
		return nil
	}
	return t.keys
}

// Field returns the subtree of key k of an object, or nil.
func (t *Tree) Field(k string) *Tree {
	if t == nil || t.fields == nil {
		return nil
	}
	if i := slices.Index(t.keys, k); i >= 0 {
		return t.fields[i]
	}
	return nil
}

// Item returns the subtree of item i of a list, or nil.
func (t *Tree) Item(i int) *Tree {
	if t == nil || i < 0 || i >= len(t.items) {
		return nil
	}
	return t.items[i]
}

// Sub returns the hint of field k of an object hint, or nil (no hint
// needed, or none known).
func Sub(hint json.RawMessage, k string) json.RawMessage {
	return Parse(hint).Field(k).Hint()
}

// FieldHints calls fn with the key and hint of every field of the JSON
// object raw whose value needs a hint (a stored state object: the hint of
// each state value). It parses raw once.
func FieldHints(raw []byte, fn func(k string, hint json.RawMessage)) {
	t := Parse(raw)
	if t == nil || !t.obj || t.fields == nil {
		return
	}
	for i, k := range t.keys {
		if h := t.fields[i].Hint(); h != nil {
			fn(k, h)
		}
	}
}

// Wrap returns the hint of the object {k: v} for the hint of v, or nil when
// v has none.
func Wrap(k string, hint json.RawMessage) json.RawMessage {
	if hint == nil {
		return nil
	}
	b := appendString([]byte{'{'}, k)
	b = append(b, ':')
	b = append(b, hint...)
	return append(b, '}')
}

// Hint returns the skeleton of t as a hint, or nil when every object in it
// has its keys in sorted order (no hint needed).
func (t *Tree) Hint() json.RawMessage {
	if t == nil || !t.unsorted {
		return nil
	}
	return t.appendSkeleton(nil)
}

// appendSkeleton writes t with every scalar, and every container in which
// all keys are sorted, as 0: those print the same with no hint.
func (t *Tree) appendSkeleton(b []byte) []byte {
	switch {
	case t == nil || !t.unsorted:
		return append(b, '0')
	case t.obj:
		b = append(b, '{')
		for i, k := range t.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var f *Tree
			if t.fields != nil {
				f = t.fields[i]
			}
			b = f.appendSkeleton(b)
		}
		return append(b, '}')
	default:
		b = append(b, '[')
		for i, it := range t.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendSkeleton(b)
		}
		return append(b, ']')
	}
}

// Decode decodes one JSON value as Python's json.loads would hold it
// (integers as int64, other numbers as float64; objects map[string]any)
// and returns it with its hint.
func Decode(raw []byte) (any, json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, fmt.Errorf("data after the JSON value at offset %d", dec.InputOffset())
	}
	return exactNumbers(v), Of(raw), nil
}

func exactNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = exactNumbers(e)
		}
	}
	return v
}

// Marshal encodes v as encoding/json does, except that the maps the hint
// orders (see Order) are written in its order. With a nil hint it is
// json.Marshal.
func Marshal(v any, hint json.RawMessage) ([]byte, error) {
	return AppendJSON(nil, v, Parse(hint))
}

// appendString writes s as a JSON string (valid JSON, not byte-identical to
// encoding/json's HTML-safe form; only hints are written with it).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}

// parser reads JSON text for its structure only.
type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Tree, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, false
	}
	switch p.b[p.i] {
	case '{':
		return p.object(depth)
	case '[':
		return p.list(depth)
	case '"':
		_, ok := p.str()
		return nil, ok
	}
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil, p.literal(p.b[start:p.i])
		}
		p.i++
	}
	return nil, p.literal(p.b[start:p.i])
}

// literal checks a number, true, false or null.
func (p *parser) literal(s []byte) bool {
	switch string(s) {
	case "true", "false", "null":
		return true
	}
	return isNumber(s)
}

// isNumber reports whether s is a JSON number: -?(0|[1-9][0-9]*)
// (.[0-9]+)?([eE][+-]?[0-9]+)?. (json.Valid says the same, at the cost of
// a scanner per number.)
func isNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (p *parser) object(depth int) (*Tree, bool) {
	p.i++ // {
	// Most objects have a few keys: room for four saves the first growths.
	t := &Tree{obj: true, keys: make([]string, 0, 4)}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return t, true
	}
	var fields []*Tree
	var seen map[string]struct{} // duplicate check once the keys are large and unsorted
	dup := false
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		sub, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		if n := len(t.keys); n > 0 && (t.unsorted || k <= t.keys[n-1]) {
			// Sorted keys so far hold no duplicate, and a key above them is new.
			switch {
			case seen != nil:
			case n <= 16:
				dup = dup || slices.Contains(t.keys, k)
			default:
				seen = make(map[string]struct{}, n)
				for _, x := range t.keys {
					seen[x] = struct{}{}
				}
			}
			if seen != nil {
				if _, ok := seen[k]; ok {
					dup = true
				}
				seen[k] = struct{}{}
			}
			t.unsorted = true
		}
		if sub != nil {
			if fields == nil {
				fields = make([]*Tree, len(t.keys), len(t.keys)+1)
			}
			t.unsorted = t.unsorted || sub.unsorted
		}
		if fields != nil {
			fields = append(fields, sub)
		}
		t.keys = append(t.keys, k)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
			t.fields = fields
			if dup {
				// Which value a duplicate key keeps differs between
				// decoders: no order is known for such an object.
				return nil, true
			}
			return t, true
		}
		return nil, false
	}
}

func (p *parser) list(depth int) (*Tree, bool) {
	p.i++ // [
	t := &Tree{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return t, true
	}
	n := 0
	for {
		sub, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		if sub != nil {
			if t.items == nil {
				t.items = make([]*Tree, n, n+1)
			}
			t.unsorted = t.unsorted || sub.unsorted
		}
		if t.items != nil {
			t.items = append(t.items, sub)
		}
		n++
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			continue
		case ']':
			p.i++
			return t, true
		}
		return nil, false
	}
}

// str reads a JSON string and returns its value.
func (p *parser) str() (string, bool) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
		case c == '"':
			p.i++
			raw := p.b[start:p.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), true
			}
			var js string
			if json.Unmarshal(raw, &js) != nil {
				return "", false
			}
			return js, true
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

// Member returns the JSON text of member k of the JSON object raw, or nil
// when raw is not an object or has no such member. It scans without
// decoding, so that a caller finds a value's text in a larger document
// cheaply (the last of duplicate members wins, as in encoding/json).
func Member(raw []byte, k string) []byte {
	var found []byte
	if !Members(raw, func(key, value []byte) bool {
		if string(key[1:len(key)-1]) == k || bytes.IndexByte(key, '\\') >= 0 && unquoteKey(key) == k {
			found = value
		}
		return true
	}) {
		return nil
	}
	return found
}

// Members calls fn with the text of each member's key (quoted, escapes
// as written) and value of the JSON object raw, in order, without
// decoding, until fn returns false. It reports whether raw is an object
// whose members it could all scan (fn may have seen members of a text
// that then turned out not to be one).
func Members(raw []byte, fn func(key, value []byte) bool) bool {
	p := parser{b: raw}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	for {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			return true
		}
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		start := p.i
		if !p.skipString() {
			return false
		}
		key := p.b[start:p.i]
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		vstart := p.i
		if !p.skip(0) {
			return false
		}
		if !fn(key, p.b[vstart:p.i]) {
			return true
		}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			return true
		}
		return false
	}
}

// Elements returns the JSON text of each item of the JSON list raw, or
// nil when raw is not a list; see Member.
func Elements(raw []byte) [][]byte {
	p := parser{b: raw}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil
	}
	p.i++
	var out [][]byte
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		return out
	}
	for {
		p.space()
		start := p.i
		if !p.skip(0) {
			return nil
		}
		out = append(out, p.b[start:p.i])
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == ']' {
			return out
		}
		return nil
	}
}

func unquoteKey(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// skip moves past one JSON value without building anything.
func (p *parser) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	p.space()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; c {
	case '"':
		return p.skipString()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == closer {
			p.i++
			return true
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.b) || p.b[p.i] != '"' || !p.skipString() {
					return false
				}
				p.space()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return false
				}
				p.i++
			}
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case ',':
				p.i++
				continue
			case closer:
				p.i++
				return true
			}
			return false
		}
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		p.i++
	}
	return true
}

// skipString moves past a JSON string (at its opening quote).
func (p *parser) skipString() bool {
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return true
		default:
			p.i++
		}
	}
	return false
}

package keyorder

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// Of returns the hint of raw JSON text, or nil when it needs none: the
// same bytes as Parse(raw).Hint(), written in one pass without building a
// Tree. It runs on every result a Wasm tool returns, so it allocates only
// the hint it returns (and a map for an unsorted object of many keys).
func Of(raw []byte) json.RawMessage {
	w := skeletons.Get().(*skeleton)
	defer func() {
		if cap(w.out) <= 64<<10 { // a huge one is not kept for the next
			w.parser, w.out, w.keys = parser{}, w.out[:0], w.keys[:0]
			skeletons.Put(w)
		}
	}()
	w.parser = parser{b: raw}
	unsorted, ok := w.value(0)
	if !ok || !unsorted {
		return nil
	}
	w.space()
	if w.i != len(w.b) {
		return nil
	}
	return bytes.Clone(w.out)
}

// skeletons keeps Of's scratch buffers between calls.
var skeletons = sync.Pool{New: func() any { return new(skeleton) }}

// skeleton writes a value's skeleton to out as it reads it. A container
// with every object's keys sorted is cut back to "0" when it ends, as
// Tree.appendSkeleton writes it.
type skeleton struct {
	parser
	out []byte
	// keys holds the keys of the objects being read, innermost last, for
	// the duplicate check (a key's text when it has no escape).
	keys [][]byte
}

// value writes the skeleton of one value and reports whether some object
// in it has its keys out of sorted order.
func (w *skeleton) value(depth int) (unsorted, ok bool) {
	if depth > maxDepth {
		return false, false
	}
	w.space()
	if w.i >= len(w.b) {
		return false, false
	}
	switch w.b[w.i] {
	case '{':
		return w.object(depth)
	case '[':
		return w.list(depth)
	case '"':
		w.out = append(w.out, '0')
		_, ok := w.skipValidString()
		return false, ok
	}
	w.out = append(w.out, '0')
	start := w.i
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return false, w.literal(w.b[start:w.i])
		}
		w.i++
	}
	return false, w.literal(w.b[start:w.i])
}

func (w *skeleton) object(depth int) (unsorted, ok bool) {
	start := len(w.out)
	w.out = append(w.out, '{')
	w.i++ // {
	w.space()
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		w.out = append(w.out[:start], '0')
		return false, true
	}
	first := len(w.keys)
	defer func() { w.keys = w.keys[:first] }()
	var seen map[string]struct{} // duplicate check once the keys are many and unsorted
	dup := false
	for {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return false, false
		}
		k, ok := w.key()
		if !ok {
			return false, false
		}
		if len(w.keys) > first {
			w.out = append(w.out, ',')
		}
		w.out = appendKey(w.out, k)
		w.out = append(w.out, ':')
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return false, false
		}
		w.i++
		sub, ok := w.value(depth + 1)
		if !ok {
			return false, false
		}
		if n := len(w.keys) - first; n > 0 && (unsorted || bytes.Compare(k, w.keys[len(w.keys)-1]) <= 0) {
			// Sorted keys so far hold no duplicate, and a key above them is new.
			switch {
			case seen != nil:
			case n <= 16:
				for _, x := range w.keys[first:] {
					dup = dup || bytes.Equal(x, k)
				}
			default:
				seen = make(map[string]struct{}, n)
				for _, x := range w.keys[first:] {
					seen[string(x)] = struct{}{}
				}
			}
			if seen != nil {
				if _, ok := seen[string(k)]; ok {
					dup = true
				}
				seen[string(k)] = struct{}{}
			}
			unsorted = true
		}
		unsorted = unsorted || sub
		w.keys = append(w.keys, k)
		w.space()
		if w.i >= len(w.b) {
			return false, false
		}
		switch w.b[w.i] {
		case ',':
			w.i++
			continue
		case '}':
			w.i++
			if dup || !unsorted {
				// Which value a duplicate key keeps differs between
				// decoders: such an object is written as a scalar, as
				// Parse gives it no Tree.
				w.out = append(w.out[:start], '0')
				return false, true
			}
			w.out = append(w.out, '}')
			return true, true
		}
		return false, false
	}
}

func (w *skeleton) list(depth int) (unsorted, ok bool) {
	start := len(w.out)
	w.out = append(w.out, '[')
	w.i++ // [
	w.space()
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		w.out = append(w.out[:start], '0')
		return false, true
	}
	for n := 0; ; n++ {
		if n > 0 {
			w.out = append(w.out, ',')
		}
		sub, ok := w.value(depth + 1)
		if !ok {
			return false, false
		}
		unsorted = unsorted || sub
		w.space()
		if w.i >= len(w.b) {
			return false, false
		}
		switch w.b[w.i] {
		case ',':
			w.i++
			continue
		case ']':
			w.i++
			if !unsorted {
				w.out = append(w.out[:start], '0')
				return false, true
			}
			w.out = append(w.out, ']')
			return true, true
		}
		return false, false
	}
}

// key reads a JSON string and returns its value's bytes: the text between
// the quotes when it has no escape, else the decoded value.
func (w *skeleton) key() ([]byte, bool) {
	start := w.i
	escaped, ok := w.skipValidString()
	if !ok {
		return nil, false
	}
	raw := w.b[start:w.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// plainInString marks the bytes a JSON string holds as they are: all but
// the quote, the backslash and control characters.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipValidString moves past a JSON string (at its opening quote) that
// encoding/json accepts, and reports whether it has an escape.
func (w *skeleton) skipValidString() (escaped, ok bool) {
	w.i++ // "
	for w.i < len(w.b) {
		// Skip the run of bytes that need no check, a table load each.
		b, i := w.b, w.i
		for i < len(b) && plainInString[b[i]] {
			i++
		}
		if w.i = i; i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			w.i++
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
			escaped = true
			if w.i+1 >= len(w.b) {
				return false, false
			}
			switch w.b[w.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				w.i += 2
			case 'u':
				if w.i+6 > len(w.b) {
					return false, false
				}
				for _, h := range w.b[w.i+2 : w.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false, false
					}
				}
				w.i += 6
			default:
				return false, false
			}
		default:
			w.i++
		}
	}
	return false, false
}

// appendKey writes k as appendString does: as it is when nothing in it
// needs escaping.
func appendKey(b, k []byte) []byte {
	for _, c := range k {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendString(b, string(k))
		}
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"')
}

package streaming

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxArrayIndex bounds how far a streamed argument may grow a list.
const maxArrayIndex = 10_000

// parsePath splits a JSON path such as $.a.b[0]['c d'] into map keys
// (string) and list indexes (int). Characters that fit no step are skipped,
// which makes the parser forgiving of odd input, as google-adk's is.
func parsePath(path string) []any {
	switch {
	case strings.HasPrefix(path, "$."):
		path = path[2:]
	case strings.HasPrefix(path, "$"):
		path = path[1:]
	}
	var out []any
	for i := 0; i < len(path); {
		if path[i] == '[' {
			if idx, n, ok := scanIndex(path[i:]); ok {
				out = append(out, idx)
				i += n
				continue
			}
			if key, n, ok := scanQuoted(path[i:]); ok {
				out = append(out, key)
				i += n
				continue
			}
			i++
			continue
		}
		if key, n, ok := scanName(path[i:]); ok {
			out = append(out, key)
			i += n
			continue
		}
		i++
	}
	return out
}

// scanIndex reads "[ 12 ]" at the start of s.
func scanIndex(s string) (int, int, bool) {
	i := 1
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return 0, 0, false
	}
	digits := s[start:i]
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != ']' {
		return 0, 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		n = maxArrayIndex + 1 // too large to use; setPath ignores it
	}
	return n, i + 1, true
}

// scanQuoted reads ['key'] or ["key"] at the start of s.
func scanQuoted(s string) (string, int, bool) {
	if len(s) < 2 || (s[1] != '\'' && s[1] != '"') {
		return "", 0, false
	}
	q := s[1]
	for i := 2; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(s) && s[i+1] == ']' {
				return unescape(s[2:i]), i + 2, true
			}
			return "", 0, false
		}
	}
	return "", 0, false
}

// scanName reads an optional dot and then a run of characters other than
// '.', '[', ']' and '\', where a backslash escapes the next character.
func scanName(s string) (string, int, bool) {
	i := 0
	if s[0] == '.' {
		i = 1
	}
	start := i
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			if i+1 >= len(s) {
				break
			}
			_, size := utf8.DecodeRuneInString(s[i+1:])
			i += 1 + size
			continue
		}
		if c == '.' || c == '[' || c == ']' {
			break
		}
		i++
	}
	if i == start {
		return "", 0, false
	}
	return unescape(s[start:i]), i, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// unescape resolves \uXXXX, \n, \r, \t, \b, \f and \<char> in a path step.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		if next == 'u' && i+6 <= len(s) {
			if r, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				b.WriteRune(rune(r))
				i += 5
				continue
			}
		}
		switch next {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			_, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteString(s[i+1 : i+1+size])
			i += size - 1
		}
		i++
	}
	return b.String()
}

// getPath looks a parsed path up in v.
func getPath(v any, path []any) (any, bool) {
	cur := v
	for _, step := range path {
		switch k := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		}
	}
	return cur, true
}

// setPath stores value at path inside root, creating maps and lists on the
// way. A step that does not fit what is already there leaves the rest alone.
func setPath(root map[string]any, path []any, value any) {
	if len(path) == 0 {
		return
	}
	setIn(root, path, value)
}

func setIn(cur any, path []any, value any) any {
	switch k := path[0].(type) {
	case string:
		m, ok := cur.(map[string]any)
		if !ok {
			return cur
		}
		if len(path) == 1 {
			m[k] = value
			return m
		}
		child, exists := m[k]
		if !exists {
			child = emptyContainer(path[1])
		}
		m[k] = setIn(child, path[1:], value)
		return m
	case int:
		l, ok := cur.([]any)
		if !ok || k < 0 || k > maxArrayIndex {
			return cur
		}
		for len(l) <= k {
			l = append(l, nil)
		}
		if len(path) == 1 {
			l[k] = value
			return l
		}
		if l[k] == nil {
			l[k] = emptyContainer(path[1])
		}
		l[k] = setIn(l[k], path[1:], value)
		return l
	}
	return cur
}

func emptyContainer(next any) any {
	if _, isIndex := next.(int); isIndex {
		return []any{}
	}
	return map[string]any{}
}

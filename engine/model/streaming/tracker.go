package streaming

import (
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/internal/pyfmt"
)

// JSONPathTracker turns a function call's arguments, streamed as pieces of
// one JSON object (Anthropic's input_json_delta), into partial arguments
// (genai.PartialArg) as google-adk's _JsonPathTracker does: each piece
// yields the values it completed or extended, by JSON path, a string still
// open being marked will_continue. A JSONPathTracker is for one call and
// is not safe for concurrent use.
type JSONPathTracker struct {
	acc           strings.Builder
	prevCompleted string
	prev          *object
	needReset     bool
	stack         []byte
	inString      bool
	escaped       bool
	seenOpen      bool
	// currentPath is the open string the last piece extended, the fast
	// path's target; openPath is the string still open.
	currentPath string
	currentKeys []any
	openPath    string
}

// NewJSONPathTracker returns a tracker for one streamed call.
func NewJSONPathTracker() *JSONPathTracker { return &JSONPathTracker{prev: &object{}} }

// partialArg is a PartialArg whose string value may be absent (Python's
// None), which genai's string field cannot tell from "".
type partialArg struct {
	path         string
	str          *string
	num          *float64
	boolean      *bool
	null         bool
	willContinue bool
}

func (p partialArg) genai() *genai.PartialArg {
	out := &genai.PartialArg{JsonPath: p.path, NumberValue: p.num, BoolValue: p.boolean, WillContinue: genai.Ptr(p.willContinue)}
	if p.str != nil {
		out.StringValue = *p.str
	}
	if p.null {
		out.NULLValue = "NULL_VALUE"
	}
	return out
}

func strArg(path, s string, willContinue bool) partialArg {
	return partialArg{path: path, str: &s, willContinue: willContinue}
}

// HandleChunk takes the next piece of the arguments' JSON and returns the
// partial arguments it brings, or none.
func (t *JSONPathTracker) HandleChunk(chunk string) []*genai.PartialArg {
	var out []*genai.PartialArg
	for _, p := range t.handle(chunk) {
		out = append(out, p.genai())
	}
	return out
}

func (t *JSONPathTracker) handle(chunk string) []partialArg {
	if chunk == "" {
		return nil
	}
	if t.needReset {
		*t = JSONPathTracker{prev: &object{}}
	}
	// Plain characters added to an open string: no re-parse.
	if t.inString && !t.escaped && t.currentKeys != nil && !strings.ContainsAny(chunk, `"\`) {
		t.acc.WriteString(chunk)
		existing, _ := getOrdered(t.prev, t.currentKeys)
		s, _ := existing.(string)
		setOrdered(t.prev, t.currentKeys, s+chunk)
		return []partialArg{strArg(t.currentPath, chunk, true)}
	}
	t.acc.WriteString(chunk)
	t.currentPath, t.currentKeys = "", nil
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if t.inString {
			switch {
			case t.escaped:
				t.escaped = false
			case c == '\\':
				t.escaped = true
			case c == '"':
				t.inString = false
			}
			continue
		}
		switch c {
		case '"':
			t.inString = true
		case '{', '[':
			t.stack = append(t.stack, c)
			t.seenOpen = true
		case '}', ']':
			if n := len(t.stack); n > 0 && (c == '}' && t.stack[n-1] == '{' || c == ']' && t.stack[n-1] == '[') {
				t.stack = t.stack[:n-1]
			}
		}
	}
	if t.seenOpen && len(t.stack) == 0 && !t.inString {
		t.needReset = true
	}
	completed := t.completeJSON()
	if completed == "" {
		return nil
	}
	if completed == t.prevCompleted {
		if !t.inString && t.openPath != "" {
			closed := t.openPath
			t.openPath = ""
			return []partialArg{strArg(closed, "", false)}
		}
		return nil
	}
	t.prevCompleted = completed
	cur, err := parseOrdered(completed)
	if err != nil {
		return nil
	}
	obj, ok := cur.(*object)
	if !ok {
		return nil
	}
	diffs := diff(t.prev, obj, "$")
	t.prev = obj
	if t.openPath != "" {
		found := false
		for _, d := range diffs {
			found = found || d.path == t.openPath
		}
		if !found {
			diffs = append([]partialArg{strArg(t.openPath, "", false)}, diffs...)
			t.openPath = ""
		}
	}
	if t.inString {
		for i := len(diffs) - 1; i >= 0; i-- {
			if diffs[i].str != nil && diffs[i].path != "" {
				t.currentPath, t.currentKeys = diffs[i].path, parsePath(diffs[i].path)
				t.openPath = diffs[i].path
				diffs[i].willContinue = true
				break
			}
		}
	} else {
		t.currentPath, t.currentKeys, t.openPath = "", nil, ""
	}
	return diffs
}

// completeJSON closes what the pieces so far left open, or returns "" when
// they end where no value can be completed yet (after a colon, inside a
// number, right after an opening bracket).
func (t *JSONPathTracker) completeJSON() string {
	if !t.seenOpen {
		return ""
	}
	acc := t.acc.String()
	closers := func() string {
		var b strings.Builder
		for i := len(t.stack) - 1; i >= 0; i-- {
			if t.stack[i] == '{' {
				b.WriteByte('}')
			} else {
				b.WriteByte(']')
			}
		}
		return b.String()
	}
	if t.inString {
		if t.escaped {
			return ""
		}
		return acc + `"` + closers()
	}
	trimmed := strings.TrimRightFunc(acc, pyfmt.IsSpace)
	if trimmed == "" {
		return ""
	}
	lastRune, _ := utf8.DecodeLastRuneInString(trimmed)
	switch {
	case lastRune == ':' || unicode.IsDigit(lastRune):
		return ""
	case lastRune == '{' && len(t.stack) > 1 || lastRune == '[':
		return ""
	case lastRune == ',':
		return trimmed[:len(trimmed)-1] + closers()
	}
	return acc + closers()
}

// object is a JSON object that keeps its keys' order, as Python's dicts
// do, so partial arguments come in the order the model wrote them.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// maxDepth bounds the nesting of parsed arguments.
const maxDepth = 512

// parseOrdered decodes JSON with objects as *object and numbers as
// json.Number.
func parseOrdered(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeOrdered(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func decodeOrdered(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '{':
			o := &object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			var l []any
			for dec.More() {
				v, err := decodeOrdered(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			if l == nil {
				l = []any{}
			}
			return l, err
		}
		return nil, errors.New("unexpected delimiter")
	}
	return tok, nil
}

// diff is google-adk's _get_diff: what curr adds to or changes in prev,
// leaf by leaf, as partial arguments.
func diff(prev, curr any, path string) []partialArg {
	var out []partialArg
	po, pIsObj := prev.(*object)
	co, cIsObj := curr.(*object)
	pl, pIsList := prev.([]any)
	cl, cIsList := curr.([]any)
	switch {
	case pIsObj && cIsObj:
		for _, k := range co.keys {
			v := co.vals[k]
			p := appendPathKey(path, k)
			if pv, ok := po.get(k); ok {
				out = append(out, diff(pv, v, p)...)
			} else {
				out = append(out, newValue(p, v)...)
			}
		}
	case pIsList && cIsList:
		for i, v := range cl {
			p := path + "[" + strconv.Itoa(i) + "]"
			if i < len(pl) {
				out = append(out, diff(pl[i], v, p)...)
			} else {
				out = append(out, newValue(p, v)...)
			}
		}
	case !equal(prev, curr):
		ps, pIsStr := prev.(string)
		cs, cIsStr := curr.(string)
		switch {
		case pIsStr && cIsStr && strings.HasPrefix(cs, ps):
			if delta := cs[len(ps):]; delta != "" {
				out = append(out, strArg(path, delta, false))
			}
		case pIsStr && cIsStr:
			out = append(out, strArg(path, cs, false))
		default:
			out = append(out, newValue(path, curr)...)
		}
	}
	return out
}

// newValue is google-adk's _get_diff_new_value: every leaf of v.
func newValue(path string, v any) []partialArg {
	switch x := v.(type) {
	case *object:
		if len(x.keys) > 0 {
			var out []partialArg
			for _, k := range x.keys {
				out = append(out, newValue(appendPathKey(path, k), x.vals[k])...)
			}
			return out
		}
	case []any:
		if len(x) > 0 {
			var out []partialArg
			for i, e := range x {
				out = append(out, newValue(path+"["+strconv.Itoa(i)+"]", e)...)
			}
			return out
		}
	case string:
		return []partialArg{strArg(path, x, false)}
	case json.Number:
		f, _ := x.Float64()
		return []partialArg{{path: path, num: &f}}
	case bool:
		return []partialArg{{path: path, boolean: &x}}
	case nil:
		return []partialArg{{path: path, null: true}}
	}
	// An empty object or list: a partial argument with no value.
	return []partialArg{{path: path}}
}

// equal is Python's == on decoded JSON (1 == 1.0).
func equal(a, b any) bool {
	an, aNum := a.(json.Number)
	bn, bNum := b.(json.Number)
	if aNum && bNum {
		af, _ := an.Float64()
		bf, _ := bn.Float64()
		return af == bf
	}
	switch x := a.(type) {
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.get(k)
			if !ok || !equal(x.vals[k], yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string, bool, nil:
		return a == b
	}
	return false
}

var identifier = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// appendPathKey is google-adk's _append_json_path_key: $.key for an
// identifier, $['key'] with escapes otherwise.
func appendPathKey(path, key string) string {
	if identifier.MatchString(key) {
		return path + "." + key
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "\b", `\b`, "\f", `\f`)
	return path + "['" + r.Replace(key) + "']"
}

// getOrdered and setOrdered are getPath and setPath over *object trees.
func getOrdered(v any, path []any) (any, bool) {
	cur := v
	for _, step := range path {
		switch s := step.(type) {
		case string:
			o, ok := cur.(*object)
			if !ok {
				return nil, false
			}
			if cur, ok = o.get(s); !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || s < 0 || s >= len(l) {
				return nil, false
			}
			cur = l[s]
		}
	}
	return cur, true
}

func setOrdered(root *object, path []any, value any) {
	if len(path) == 0 {
		return
	}
	var cur any = root
	for i, step := range path {
		lastStep := i == len(path)-1
		switch s := step.(type) {
		case string:
			o, ok := cur.(*object)
			if !ok {
				return
			}
			if lastStep {
				o.set(s, value)
				return
			}
			next, ok := o.get(s)
			if !ok {
				next = emptyOrderedContainer(path[i+1])
				o.set(s, next)
			}
			cur = next
		case int:
			// Lists grow in place only through their parent, which the
			// trackers' paths always come from; a path through a list the
			// previous parse did not have is left alone.
			l, ok := cur.([]any)
			if !ok || s < 0 || s >= len(l) {
				return
			}
			if lastStep {
				l[s] = value
				return
			}
			cur = l[s]
		}
	}
}

func emptyOrderedContainer(next any) any {
	if _, ok := next.(int); ok {
		return []any{}
	}
	return &object{}
}

package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// placeholder is a template variable in a reactive rule's response:
// {{text}}, {{1}}, {{city}}, {{tool}}, {{response}}, {{response.a.b}},
// optionally with a conversion: {{days | int}}, {{1 | number}}, {{ok | bool}}.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.]+)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}`)

// conversions are the names a placeholder may convert its value with. A
// regexp group is always text: a tool with number or boolean parameters
// needs one of these to be called from a user_matches capture.
var conversions = map[string]func(any) (any, error){
	"int":    toInt,
	"number": toNumber,
	"bool":   toBool,
}

// checkTemplates reports a placeholder of spec naming no variable in vars
// (a "response." path is checked only for its head) or an unknown
// conversion.
func checkTemplates(spec ResponseSpec, vars map[string]bool) error {
	var badVars, badConv []string
	walkStrings(spec, func(s string) (any, error) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			head, _, _ := strings.Cut(m[1], ".")
			if !vars[head] || (head != "response" && head != m[1]) {
				badVars = append(badVars, m[0])
			}
			if _, known := conversions[m[2]]; m[2] != "" && !known {
				badConv = append(badConv, m[0])
			}
		}
		return s, nil
	})
	if len(badVars) > 0 {
		return fmt.Errorf("unknown template variable %s (known: text, tool, response, response.<path>, and the groups of user_matches)", strings.Join(badVars, ", "))
	}
	if len(badConv) > 0 {
		return fmt.Errorf("unknown conversion in %s (known: | int, | number, | bool)", strings.Join(badConv, ", "))
	}
	return nil
}

// MaxFilledBytes bounds what a reactive rule's placeholders write into one
// response: each {{...}} writes its whole value (the user's text, a tool's
// response), so a rule repeating a placeholder multiplies the request's
// size by the rule's (20,000 {{text}} and a 50 KB message made a 1 GB
// answer). 4 MiB is far above a useful scripted answer.
const MaxFilledBytes = 4 << 20

// FilledTooLargeError is the error of a rule whose placeholders would
// write more than MaxFilledBytes into its response.
type FilledTooLargeError struct {
	// Rule is the rule's index in the script.
	Rule  int
	Limit int
}

func (e *FilledTooLargeError) Error() string {
	return fmt.Sprintf("rule %d: its placeholders, filled in, would write more than %d bytes into the response (each {{...}} writes its whole value: the user's text, a tool's response); use fewer placeholders, or a path to a smaller part of the value ({{response.a.b}})", e.Rule, e.Limit)
}

// fill returns a copy of spec with its placeholders replaced from vars. A
// variable the request did not bind (e.g. {{tool}} for user text) is empty.
// A function call argument that is exactly one placeholder takes the
// variable's value with its type (a number stays a number), converted if
// the placeholder says so; anywhere else the value is written into the text.
// What the placeholders write, counted as JSON for a typed value, is at
// most limit bytes; past it fill stops with errFilledTooLarge.
func fill(spec ResponseSpec, vars map[string]any, limit int) (ResponseSpec, error) {
	b := fillBudget{left: limit, sizes: map[string]int{}}
	return walkStrings(spec, func(s string) (any, error) {
		if !strings.Contains(s, "{{") {
			return s, nil
		}
		if m := placeholder.FindStringSubmatchIndex(s); m != nil && m[0] == 0 && m[1] == len(s) {
			v, err := value(vars, s[m[2]:m[3]], submatch(s, m, 2), s)
			if err != nil {
				return nil, err
			}
			// The value is shared, not copied, but each use of it is
			// written out again in every request and event.
			if !b.take(s, v) {
				return nil, errFilledTooLarge
			}
			return v, nil
		}
		var err error
		out := placeholder.ReplaceAllStringFunc(s, func(p string) string {
			if err != nil {
				return ""
			}
			m := placeholder.FindStringSubmatch(p)
			v, e := value(vars, m[1], m[2], p)
			if e != nil {
				err = e
				return ""
			}
			text := render(v)
			if !b.takeN(len(text)) {
				err = errFilledTooLarge
				return ""
			}
			return text
		})
		return out, err
	})
}

// errFilledTooLarge stops fill; the caller reports it as a
// FilledTooLargeError naming the rule.
var errFilledTooLarge = errors.New("filled response too large")

// fillBudget counts the bytes fill writes, measuring each placeholder's
// value once.
type fillBudget struct {
	left  int
	sizes map[string]int // JSON size of a whole value, by placeholder text
}

// take counts a value written whole (a function call argument), as the
// JSON it becomes.
func (b *fillBudget) take(placeholder string, v any) bool {
	n, ok := b.sizes[placeholder]
	if !ok {
		n = len(render(v))
		b.sizes[placeholder] = n
	}
	return b.takeN(n)
}

// takeN counts n bytes written.
func (b *fillBudget) takeN(n int) bool {
	b.left -= n
	return b.left >= 0
}

func submatch(s string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return s[m[2*i]:m[2*i+1]]
}

// value looks a variable up and applies the placeholder's conversion.
func value(vars map[string]any, name, conv, placeholder string) (any, error) {
	v := lookup(vars, name)
	if conv == "" {
		return v, nil
	}
	c, err := conversions[conv](v)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", placeholder, err)
	}
	return c, nil
}

func toInt(v any) (any, error) {
	switch v := v.(type) {
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return i, nil
		}
	}
	return nil, fmt.Errorf("%s is not an integer", render(v))
}

func toNumber(v any) (any, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%s is not a number", render(v))
}

func toBool(v any) (any, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
	}
	return nil, fmt.Errorf("%s is not a boolean (true/false, yes/no, on/off, 1/0)", render(v))
}

// walkStrings returns a copy of spec with f applied to the strings a
// template may appear in: text, thought, error_message, function call ids
// and every string inside function call args. Only in args may f's value
// be something other than a string; elsewhere it is rendered as text.
func walkStrings(spec ResponseSpec, f func(string) (any, error)) (ResponseSpec, error) {
	var firstErr error
	text := func(s string) string {
		v, err := f(s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return render(v)
	}
	out := spec
	out.Text = text(spec.Text)
	out.Thought = text(spec.Thought)
	out.ErrorMessage = text(spec.ErrorMessage)
	if spec.FunctionCalls != nil {
		out.FunctionCalls = make([]FunctionCallSpec, len(spec.FunctionCalls))
		for i, fc := range spec.FunctionCalls {
			out.FunctionCalls[i] = FunctionCallSpec{Name: fc.Name, ID: text(fc.ID)}
			if fc.Args != nil {
				args, err := walkValue(fc.Args, f)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				out.FunctionCalls[i].Args = args.(map[string]any)
			}
		}
	}
	return out, firstErr
}

// walkValue copies v, replacing every string in it with f's value.
func walkValue(v any, f func(string) (any, error)) (any, error) {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			w, err := walkValue(e, f)
			keep(err)
			out[k] = w
		}
		return out, firstErr
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			w, err := walkValue(e, f)
			keep(err)
			out[i] = w
		}
		return out, firstErr
	default:
		return v, nil
	}
}

// lookup resolves a dotted name: the head in vars, then map keys and list
// indexes. A missing step gives nil.
func lookup(vars map[string]any, name string) any {
	keys := strings.Split(name, ".")
	cur, ok := vars[keys[0]]
	if !ok {
		return nil
	}
	for _, k := range keys[1:] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// render writes a value into text: a string as is, nil as nothing, anything
// else as JSON.
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(data)
	}
}

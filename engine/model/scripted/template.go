package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// placeholder is a template variable in a reactive rule's response:
// {{text}}, {{1}}, {{city}}, {{tool}}, {{response}}, {{response.a.b}}.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.]+)\s*\}\}`)

// checkTemplates reports a placeholder of spec naming no variable in vars
// (a "response." path is checked only for its head).
func checkTemplates(spec ResponseSpec, vars map[string]bool) error {
	var bad []string
	walkStrings(spec, func(s string) string {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			head, _, _ := strings.Cut(m[1], ".")
			if !vars[head] || (head != "response" && head != m[1]) {
				bad = append(bad, m[0])
			}
		}
		return s
	})
	if len(bad) > 0 {
		return fmt.Errorf("unknown template variable %s (known: text, tool, response, response.<path>, and the groups of user_matches)", strings.Join(bad, ", "))
	}
	return nil
}

// fill returns a copy of spec with its placeholders replaced from vars. A
// variable the request did not bind (e.g. {{tool}} for user text) is empty.
func fill(spec ResponseSpec, vars map[string]any) ResponseSpec {
	return walkStrings(spec, func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			name := placeholder.FindStringSubmatch(m)[1]
			return render(lookup(vars, name))
		})
	})
}

// walkStrings returns a copy of spec with f applied to the strings a
// template may appear in: text, thought, error_message, function call ids
// and every string inside function call args.
func walkStrings(spec ResponseSpec, f func(string) string) ResponseSpec {
	out := spec
	out.Text = f(spec.Text)
	out.Thought = f(spec.Thought)
	out.ErrorMessage = f(spec.ErrorMessage)
	if spec.FunctionCalls != nil {
		out.FunctionCalls = make([]FunctionCallSpec, len(spec.FunctionCalls))
		for i, fc := range spec.FunctionCalls {
			out.FunctionCalls[i] = FunctionCallSpec{Name: fc.Name, ID: f(fc.ID)}
			if fc.Args != nil {
				out.FunctionCalls[i].Args = walkValue(fc.Args, f).(map[string]any)
			}
		}
	}
	return out
}

// walkValue copies v, applying f to every string in it.
func walkValue(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = walkValue(e, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = walkValue(e, f)
		}
		return out
	default:
		return v
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

package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// The output schema rule of google-adk 2.13 (utils/_schema_utils.py
// validate_schema): the model's text loses a ```json fence that wraps it
// whole, then an object schema with properties validates it as the pydantic
// model google-adk builds from the schema would, and the stored value is
// that model's dump with exclude_none: unknown fields dropped, null and
// absent optional fields dropped, values coerced by pydantic's lax mode
// ("7" to 7 for an integer, 2 to 2.0 for a number, "yes" to true). A value
// that does not validate fails the agent with google-adk's ValidationError
// and pydantic's message. Other schemas (no properties) keep the parsed
// JSON as it is.

// fenceLang is the language tag after an opening fence.
var fenceLang = regexp.MustCompile(`^[A-Za-z0-9_]*[ \t]*\n?`)

// stripCodeFence removes a markdown fence wrapping the whole text, as
// google-adk's _strip_json_code_fence does (string operations, no
// backtracking regexp over the body).
func stripCodeFence(text string) string {
	s := strings.TrimSpace(text)
	if len(s) >= 6 && strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") {
		inner := s[3 : len(s)-3]
		if loc := fenceLang.FindStringIndex(inner); loc != nil {
			inner = inner[loc[1]:]
		}
		return strings.TrimSpace(inner)
	}
	return text
}

// OutputValidationError is the error of a structured answer that does not
// validate against the agent's output schema: google-adk's pydantic
// ValidationError, with its message.
type OutputValidationError struct {
	Model  string
	Errors []fieldError
}

type fieldError struct {
	loc, kind, msg string
	input          any
	// order is the key order of input as the model wrote it: pydantic
	// prints the input dict in it.
	order *keyorder.Tree
}

// pydanticDocs is where pydantic's messages point (pydantic 2.14, the
// version google-adk 2.13 is measured with).
const pydanticDocs = "https://errors.pydantic.dev/2.14/v/"

func (e *OutputValidationError) Error() string {
	var b strings.Builder
	plural := "s"
	if len(e.Errors) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d validation error%s for %s", len(e.Errors), plural, e.Model)
	for _, fe := range e.Errors {
		if fe.loc != "" { // a whole-input error (json_invalid) has none
			b.WriteString("\n" + fe.loc)
		}
		fmt.Fprintf(&b, "\n  %s [type=%s, input_value=%s, input_type=%s]\n    For further information visit %s%s",
			fe.msg, fe.kind, inputRepr(fe.input, fe.order), pyType(fe.input), pydanticDocs, fe.kind)
	}
	return b.String()
}

// inputRepr is the input_value of a pydantic error: the value's repr,
// longer than 50 bytes cut to its first 25 and last 24 bytes around
// "..." (at character boundaries, the head shorter, the tail shorter).
//
// The input is JSON decoded with pyfmt.ExactNumbers, so a float64 is a
// Python float: 2.0 is written 2.0, not as the int pyfmt takes a whole
// float64 for.
func inputRepr(v any, order *keyorder.Tree) string {
	r := pyfmt.ReprOrdered(pythonFloats(v), order.Hint())
	if len(r) <= 50 {
		return r
	}
	head := 25
	for head > 0 && !utf8.RuneStart(r[head]) {
		head--
	}
	tail := len(r) - 24
	for tail < len(r) && !utf8.RuneStart(r[tail]) {
		tail++
	}
	return r[:head] + "..." + r[tail:]
}

// pythonFloats returns v with its finite float64 values as json.Number
// literals of their Python repr, which pyfmt prints as floats. v is not
// changed.
func pythonFloats(v any) any {
	return mapFloats(v, func(f float64) any {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return f
		}
		return json.Number(pyfmt.FloatRepr(f))
	})
}

// mapFloats returns a copy of v's lists and objects with each float64 in
// them replaced by f's answer for it. v is not changed.
func mapFloats(v any, f func(float64) any) any {
	switch t := v.(type) {
	case float64:
		return f(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = mapFloats(e, f)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = mapFloats(e, f)
		}
		return out
	}
	return v
}

// ErrorCode makes the error event carry google-adk's exception name.
func (e *OutputValidationError) ErrorCode() string { return "ValidationError" }

// validateOutput parses the model's text against schema, as google-adk's
// validate_schema does.
//
// It also returns the key-order hint of the result (see
// model.Response.KeyOrder): pydantic dumps a model's fields in their
// declared order, which schemaOrder (the key order of schema as written,
// LlmAgentConfig.OutputSchemaKeyOrder) gives for each properties object.
func validateOutput(schema map[string]any, schemaOrder json.RawMessage, text string) (any, json.RawMessage, error) {
	text = stripCodeFence(text)
	props, _ := schema["properties"].(map[string]any)
	isModel := (schema["type"] == nil || schema["type"] == "object") && props != nil
	title, _ := schema["title"].(string)
	if isModel {
		// pydantic's model_validate_json: text that is not one JSON value
		// (trailing text included) is its json_invalid error.
		if msg := jsonSyntaxError(text); msg != "" {
			return nil, nil, &OutputValidationError{Model: title, Errors: []fieldError{{kind: "json_invalid", msg: "Invalid JSON: " + msg, input: text}}}
		}
	}
	parsed, err := parseJSONOutput(text)
	if err != nil {
		return nil, nil, err
	}
	if !isModel {
		return parsed, nil, nil
	}
	return validateModel(schema, schemaOrder, parsed, keyorder.Parse([]byte(text)), false)
}

// validateArgs validates function call arguments against an object
// schema with properties, as pydantic's model_validate does with the dict
// google-adk's SetModelResponseTool receives: validateOutput's rules, the
// errors worded for Python objects. The arguments' whole numbers count as
// the ints they most likely were in the model's JSON.
func validateArgs(schema map[string]any, schemaOrder json.RawMessage, args map[string]any) (any, json.RawMessage, error) {
	return validateModel(schema, schemaOrder, wholeFloatsAsInts(args), nil, true)
}

// validateModel validates in against the model schema; inOrder is in's key
// order as written.
func validateModel(schema map[string]any, schemaOrder json.RawMessage, in any, inOrder *keyorder.Tree, pythonMode bool) (any, json.RawMessage, error) {
	title, _ := schema["title"].(string)
	v := &schemaValidator{root: schema, pythonMode: pythonMode}
	if t := keyorder.Parse(schemaOrder); t != nil {
		v.declared = map[unsafe.Pointer][]string{}
		v.recordDeclared(schema, t, 0)
	}
	out := v.model(schema, title, in, "", inOrder)
	if len(v.errs) > 0 {
		return nil, nil, &OutputValidationError{Model: title, Errors: v.errs}
	}
	var order json.RawMessage
	if v.dumped != nil {
		order = keyorder.Of(appendSkeleton(nil, out, v.dumped))
	}
	return out, order, nil
}

// wholeFloatsAsInts returns a copy of v with its whole float64 values
// within ±2^53 as int64, as Python's json decodes a model's 5 (pyfmt's
// number policy).
func wholeFloatsAsInts(v any) any {
	return mapFloats(v, func(f float64) any {
		if f == math.Trunc(f) && math.Abs(f) <= 1<<53 && !(f == 0 && math.Signbit(f)) {
			return int64(f)
		}
		return f
	})
}

type schemaValidator struct {
	root map[string]any // for "$ref": "#/$defs/<Name>"
	errs []fieldError
	// declared holds, by properties map, its names in declared order (from
	// the schema's key order); dumped, by output map, its keys in the
	// order model set them.
	declared map[unsafe.Pointer][]string
	dumped   map[unsafe.Pointer][]string
	// pythonMode words the errors as pydantic's model_validate (Python
	// objects) does, rather than model_validate_json.
	pythonMode bool
}

// recordDeclared walks a schema beside the tree of its key order and
// records the declared order of each properties object.
func (v *schemaValidator) recordDeclared(node map[string]any, t *keyorder.Tree, depth int) {
	if node == nil || t == nil || depth > 64 {
		return
	}
	if props, ok := node["properties"].(map[string]any); ok && len(props) > 0 {
		pt := t.Field("properties")
		var names []string
		for _, k := range pt.Keys() {
			if _, ok := props[k]; ok {
				names = append(names, k)
			}
		}
		if len(names) == len(props) {
			v.declared[reflect.ValueOf(props).UnsafePointer()] = names
		}
		for k, p := range props {
			if m, ok := p.(map[string]any); ok {
				v.recordDeclared(m, pt.Field(k), depth+1)
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		v.recordDeclared(items, t.Field("items"), depth+1)
	}
	if alts, ok := node["anyOf"].([]any); ok {
		for i, a := range alts {
			if m, ok := a.(map[string]any); ok {
				v.recordDeclared(m, t.Field("anyOf").Item(i), depth+1)
			}
		}
	}
	if defs, ok := node["$defs"].(map[string]any); ok {
		for k, d := range defs {
			if m, ok := d.(map[string]any); ok {
				v.recordDeclared(m, t.Field("$defs").Field(k), depth+1)
			}
		}
	}
}

// appendSkeleton writes the key-order skeleton of a validated value: the
// maps model built in the order it set their keys, anything else sorted.
func appendSkeleton(b []byte, x any, dumped map[unsafe.Pointer][]string) []byte {
	switch t := x.(type) {
	case map[string]any:
		keys := dumped[reflect.ValueOf(t).UnsafePointer()]
		if len(keys) != len(t) {
			keys = slices.Sorted(maps.Keys(t))
		}
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k)
			b = append(b, kb...)
			b = append(b, ':')
			b = appendSkeleton(b, t[k], dumped)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSkeleton(b, e, dumped)
		}
		return append(b, ']')
	}
	return append(b, '0')
}

// deref follows a local $ref into the root schema's $defs.
func (v *schemaValidator) deref(ps map[string]any) map[string]any {
	for range 16 { // bounded: refs to refs
		ref, ok := ps["$ref"].(string)
		if !ok {
			return ps
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := v.root["$defs"].(map[string]any)
		next, found := defs[name].(map[string]any)
		if !ok || !found {
			return ps
		}
		ps = next
	}
	return ps
}

// fail records an error of input at loc; order is input's key order.
func (v *schemaValidator) fail(loc, kind, msg string, input any, order *keyorder.Tree) {
	v.errs = append(v.errs, fieldError{loc: loc, kind: kind, msg: msg, input: input, order: order})
}

// propertyOrder is the schema's properties in their declared order where
// it is known (the schema's key order, or its propertyOrdering), else
// sorted.
func (v *schemaValidator) propertyOrder(schema map[string]any, props map[string]any) []string {
	if names, ok := v.declared[reflect.ValueOf(props).UnsafePointer()]; ok && props != nil {
		return names
	}
	var names []string
	if ord, ok := schema["propertyOrdering"].([]any); ok {
		for _, n := range ord {
			if s, ok := n.(string); ok {
				names = append(names, s)
			}
		}
		return names
	}
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// model validates an object against a model schema and returns its dump.
//
// t is the key order of in as written (for the errors' input reprs).
func (v *schemaValidator) model(schema map[string]any, title string, in any, loc string, t *keyorder.Tree) any {
	obj, ok := in.(map[string]any)
	if !ok {
		if v.pythonMode {
			v.fail(loc, "model_type", "Input should be a valid dictionary or instance of "+title, in, t)
		} else {
			v.fail(loc, "model_type", "Input should be an object", in, t)
		}
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	} else if req, ok := schema["required"].([]string); ok {
		for _, s := range req {
			required[s] = true
		}
	}
	out := map[string]any{}
	var dumped []string
	defer func() {
		if len(dumped) > 1 {
			if v.dumped == nil {
				v.dumped = map[unsafe.Pointer][]string{}
			}
			v.dumped[reflect.ValueOf(out).UnsafePointer()] = dumped
		}
	}()
	for _, name := range v.propertyOrder(schema, props) {
		ps, _ := props[name].(map[string]any)
		val, present := obj[name]
		at := join(loc, name)
		switch {
		case !present && required[name]:
			v.fail(at, "missing", "Field required", obj, t)
		case !present || val == nil && !required[name]:
			// An optional field absent or null: None, dropped by exclude_none.
		default:
			if r := v.value(ps, title, name, val, at, t.Field(name)); r != nil {
				out[name] = r
				dumped = append(dumped, name)
			}
		}
	}
	// A model with extra="forbid" (additionalProperties false in its
	// schema) refuses other fields, after its own fields' errors; in the
	// input's order where known, else sorted.
	if schema["additionalProperties"] == false {
		keys := t.Keys()
		if len(keys) != len(obj) {
			keys = slices.Sorted(maps.Keys(obj))
		}
		for _, k := range keys {
			if _, known := props[k]; !known {
				v.fail(join(loc, k), "extra_forbidden", "Extra inputs are not permitted", obj[k], t.Field(k))
			}
		}
	}
	return out
}

// value validates one value against a property schema.
func (v *schemaValidator) value(ps map[string]any, parentTitle, name string, in any, loc string, t *keyorder.Tree) any {
	ps = v.deref(ps)
	if alts, ok := ps["anyOf"].([]any); ok {
		// Optional[T]: pydantic's schema is anyOf [T, null]; a null never
		// reaches here (model drops it), so T is the schema.
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok && m["type"] != "null" {
				ps = v.deref(m)
				break
			}
		}
	}
	typ, _ := ps["type"].(string)
	if types, ok := ps["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "string":
		if s, ok := in.(string); ok {
			return s
		}
		v.fail(loc, "string_type", "Input should be a valid string", in, t)
	case "integer":
		switch n := in.(type) {
		case int64:
			return n
		case bool:
			if n {
				return int64(1)
			}
			return int64(0)
		case float64:
			switch {
			case n != math.Trunc(n) || math.IsNaN(n):
				v.fail(loc, "int_from_float", "Input should be a valid integer, got a number with a fractional part", in, t)
			case !inInt64(n):
				v.fail(loc, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", in, t)
			default:
				return int64(n)
			}
		case json.Number: // an integer beyond int64 (pyfmt.ExactNumbers)
			if i, err := n.Int64(); err == nil {
				return i
			}
			if pyfmt.IsIntLiteral(n) {
				return n
			}
			v.fail(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", in, t)
		case string:
			if i, ok := parseIntString(n); ok {
				return i
			}
			v.fail(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", in, t)
		default:
			v.fail(loc, "int_type", "Input should be a valid integer", in, t)
		}
	case "number":
		var f float64
		switch n := in.(type) {
		case int64:
			f = float64(n)
		case json.Number:
			f, _ = n.Float64() // an integer beyond int64: Python's float() of it
		case float64:
			f = n
		case bool:
			if n {
				f = 1
			}
		case string:
			var ok bool
			if f, ok = parseFloatString(n); !ok {
				v.fail(loc, "float_parsing", "Input should be a valid number, unable to parse string as a number", in, t)
				return nil
			}
		default:
			v.fail(loc, "float_type", "Input should be a valid number", in, t)
			return nil
		}
		return pythonFloat(f)
	case "boolean":
		switch b := in.(type) {
		case bool:
			return b
		case int64:
			if b == 0 || b == 1 {
				return b == 1
			}
			v.fail(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", in, t)
		case float64:
			if b == 0 || b == 1 {
				return b == 1
			}
			if b == math.Trunc(b) && inInt64(b) { // as an int would be
				v.fail(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", in, t)
			} else {
				v.fail(loc, "bool_type", "Input should be a valid boolean", in, t)
			}
		case string:
			switch strings.ToLower(b) {
			case "true", "t", "yes", "y", "on", "1":
				return true
			case "false", "f", "no", "n", "off", "0":
				return false
			}
			v.fail(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", in, t)
		default:
			v.fail(loc, "bool_type", "Input should be a valid boolean", in, t)
		}
	case "array":
		list, ok := in.([]any)
		if !ok {
			if v.pythonMode {
				v.fail(loc, "list_type", "Input should be a valid list", in, t)
			} else {
				v.fail(loc, "list_type", "Input should be a valid array", in, t)
			}
			return nil
		}
		items, _ := ps["items"].(map[string]any)
		if items != nil {
			items = v.deref(items)
		}
		out := make([]any, 0, len(list))
		for i, e := range list {
			if items == nil {
				out = append(out, e)
				continue
			}
			out = append(out, v.value(items, parentTitle, name, e, join(loc, strconv.Itoa(i)), t.Item(i)))
		}
		return out
	case "object":
		if _, ok := ps["properties"].(map[string]any); ok {
			title, _ := ps["title"].(string)
			if title == "" {
				title = parentTitle + titleWord(name)
			}
			return v.model(ps, title, in, loc, t)
		}
		if m, ok := in.(map[string]any); ok {
			return m
		}
		if v.pythonMode {
			v.fail(loc, "dict_type", "Input should be a valid dictionary", in, t)
		} else {
			v.fail(loc, "dict_type", "Input should be an object", in, t)
		}
	default:
		return in
	}
	return nil
}

// titleWord is Python's str.title() of a property name, as google-adk
// names the model of a nested object property.
func titleWord(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if up {
			b.WriteString(strings.ToUpper(string(r)))
		} else {
			b.WriteString(strings.ToLower(string(r)))
		}
		up = !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}
	return b.String()
}

func join(loc, name string) string {
	if loc == "" {
		return name
	}
	return loc + "." + name
}

// pythonFloat is a validated float field's value. Python keeps it a float
// even when whole (2.0: an instruction quoting it, json.dumps of it), where
// adkhost takes a whole float64 for the int it most often was (pyfmt's
// number policy); so a whole one is a json.Number literal of its repr,
// which pyfmt prints and encoding/json writes as 2.0.
func pythonFloat(f float64) any {
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		return json.Number(pyfmt.FloatRepr(f))
	}
	return f
}

// inInt64 reports whether the whole number f fits an int64.
func inInt64(f float64) bool { return f >= -(1<<63) && f < 1<<63 }

// intString is the text pydantic (lax mode) takes as an integer: digits
// with single underscores between them, a sign, and a fraction of zeros.
var intString = regexp.MustCompile(`^([+-]?)([0-9]+(?:_[0-9]+)*)(?:\.0+)?$`)

// parseIntString parses a string as pydantic's lax mode does for an int
// field: surrounding whitespace ignored, "1_000", "+5", "12.00" accepted;
// an integer beyond int64 stays exact as a json.Number, as Python's int
// does (pyfmt prints it, encoding/json writes its digits).
func parseIntString(s string) (any, bool) {
	m := intString.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return nil, false
	}
	digits := m[1] + strings.ReplaceAll(m[2], "_", "")
	if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
		return i, true
	}
	b, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, false
	}
	return json.Number(b.String()), true
}

// parseFloatString parses a string as pydantic's lax mode does for a float
// field: Python's float() syntax (inf, nan, "1_0.5"), surrounding
// whitespace ignored unless the text has underscores, which pydantic then
// refuses.
func parseFloatString(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, "_") {
		if t != s || !underscoresBetweenDigits(t) {
			return 0, false
		}
		t = strings.ReplaceAll(t, "_", "")
	}
	if strings.HasPrefix(strings.TrimLeft(t, "+-"), "0x") || strings.HasPrefix(strings.TrimLeft(t, "+-"), "0X") {
		return 0, false // Go's hexadecimal floats, which Python's float() refuses
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

// underscoresBetweenDigits reports whether every underscore of s stands
// between two ASCII digits, as Python's number syntax requires.
func underscoresBetweenDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && (i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1])) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// pyType is the Python type name of a decoded JSON value.
func pyType(v any) string {
	switch t := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, int:
		return "int"
	case float64:
		return "float"
	case json.Number:
		if pyfmt.IsIntLiteral(t) {
			return "int"
		}
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

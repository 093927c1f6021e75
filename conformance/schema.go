package conformance

import (
	"encoding/json"
	"strings"
	"unicode"
)

// JSON schemas as pydantic 2 generates them for the Python runner's tool
// signatures and output-schema models (FORMAT.md §1.3, §1.4). They are
// built here because the Go engine takes JSON schemas where google-adk takes
// Python types.

// pyStrTitle is Python's str.title(): a cased character is upper-cased
// after an uncased one, lower-cased after a cased one.
func pyStrTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		cased := unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
		switch {
		case cased && prevCased:
			b.WriteRune(unicode.ToLower(r))
		case cased:
			b.WriteRune(unicode.ToTitle(r))
		default:
			b.WriteRune(r)
		}
		prevCased = cased
	}
	return b.String()
}

// pyTitle is the part of a nested model's name taken from its property name
// (`pname.title()`).
func pyTitle(s string) string { return pyStrTitle(s) }

// fieldTitle is pydantic's default field title: name.title() with
// underscores turned into spaces.
func fieldTitle(name string) string {
	return strings.TrimSpace(strings.ReplaceAll(pyStrTitle(name), "_", " "))
}

// pyTypeSchema is the schema of a Python annotation named by a scenario
// type string: str, int, float, bool, dict, list.
func pyTypeSchema(t string) map[string]any {
	switch t {
	case "string":
		return map[string]any{"type": "string"}
	case "integer":
		return map[string]any{"type": "integer"}
	case "number":
		return map[string]any{"type": "number"}
	case "boolean":
		return map[string]any{"type": "boolean"}
	case "object":
		return map[string]any{"type": "object", "additionalProperties": true}
	case "array":
		return map[string]any{"type": "array", "items": map[string]any{}}
	}
	return nil
}

// toolParamsSchema is the parameters_json_schema google-adk derives from
//
//	async def <name>(*, <p>: <T>, <q>: <T> = <default>, <r>: Optional[<T>] = None, tool_context)
//
// or nil when the tool has no parameters.
func toolParamsSchema(name string, params []ParamSpec) map[string]any {
	if len(params) == 0 {
		return nil
	}
	props := map[string]any{}
	var required []any
	for _, p := range params {
		s := pyTypeSchema(p.Type)
		if p.Type == "array" && p.Items != "" {
			s["items"] = pyTypeSchema(p.Items)
		}
		switch {
		case p.HasDefault:
			s["default"] = deepCopy(p.Default)
		case p.Optional:
			s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}, "default": nil}
		default:
			required = append(required, p.Name)
		}
		s["title"] = fieldTitle(p.Name)
		props[p.Name] = s
	}
	out := map[string]any{"type": "object", "title": name + "Params", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// modelJSONSchema is pydantic's model_json_schema() of the model
// build_pydantic_model creates for an output_schema.
func modelJSONSchema(m *ModelSchema) map[string]any {
	defs := map[string]any{}
	out := modelSchema(m, defs)
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return out
}

func modelSchema(m *ModelSchema, defs map[string]any) map[string]any {
	props := map[string]any{}
	var required []any
	for _, p := range m.Props {
		inner, isRef := propSchema(p, defs)
		var s map[string]any
		if m.Required[p.Name] {
			s = inner
			required = append(required, p.Name)
		} else {
			s = map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}, "default": nil}
		}
		if !isRef {
			s["title"] = fieldTitle(p.Name)
		}
		// pydantic leaves out a required model field's description when it
		// repeats the referenced model's docstring (it is in $defs).
		if p.Description != nil && !(isRef && m.Required[p.Name] && p.Object != nil && p.Object.Description == *p.Description) {
			s["description"] = *p.Description
		}
		props[p.Name] = s
	}
	out := map[string]any{"type": "object", "title": m.Title, "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	if m.Description != "" {
		out["description"] = m.Description
	}
	return out
}

// propSchema returns a property's type schema and whether it is a model
// reference (pydantic sets no field title on those).
func propSchema(p *PropSchema, defs map[string]any) (map[string]any, bool) {
	switch p.Type {
	case "array":
		items, _ := propSchema(p.Items, defs)
		return map[string]any{"type": "array", "items": items}, false
	case "object":
		if p.Object != nil {
			defs[p.Object.Title] = modelSchema(p.Object, defs)
			return map[string]any{"$ref": "#/$defs/" + p.Object.Title}, true
		}
	}
	return pyTypeSchema(p.Type), false
}

// modelSchemaKeyOrder is the key order of modelJSONSchema(m) as pydantic
// writes it, for the parts that order a validated answer: the properties
// of each model in field order (LlmAgentConfig.OutputSchemaKeyOrder).
func modelSchemaKeyOrder(m *ModelSchema) json.RawMessage {
	defs := map[string][]byte{}
	var titles []string
	b := modelSkeleton(nil, m, defs, &titles)
	if len(titles) > 0 {
		b = append(b[:len(b)-1], `,"$defs":{`...)
		for i, t := range titles {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(t)
			b = append(b, kb...)
			b = append(b, ':')
			b = append(b, defs[t]...)
		}
		b = append(b, "}}"...)
	}
	return b
}

func modelSkeleton(b []byte, m *ModelSchema, defs map[string][]byte, titles *[]string) []byte {
	b = append(b, `{"properties":{`...)
	for i, p := range m.Props {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(p.Name)
		b = append(b, kb...)
		b = append(b, ':')
		inner := propSkeleton(p, defs, titles)
		if m.Required[p.Name] {
			b = append(b, inner...)
		} else {
			b = append(b, `{"anyOf":[`...)
			b = append(b, inner...)
			b = append(b, ",0]}"...)
		}
	}
	return append(b, "}}"...)
}

func propSkeleton(p *PropSchema, defs map[string][]byte, titles *[]string) []byte {
	switch {
	case p.Type == "array" && p.Items != nil:
		return append(append([]byte(`{"items":`), propSkeleton(p.Items, defs, titles)...), '}')
	case p.Type == "object" && p.Object != nil:
		if _, ok := defs[p.Object.Title]; !ok {
			defs[p.Object.Title] = nil // placeholder against cycles
			defs[p.Object.Title] = modelSkeleton(nil, p.Object, defs, titles)
			*titles = append(*titles, p.Object.Title)
		}
		return []byte("0")
	}
	return []byte("0")
}

package appdef

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode"

	"google.golang.org/genai"
)

// genai values (generate_content_config, static_instruction) are written
// as google-adk's pydantic models accept them: each field by its snake_case
// name or its camelCase JSON alias. typed walks the YAML along the Go type,
// renaming keys to the JSON names and checking them and the scalar types
// at their positions, then encoding/json decodes the result.

// parseContentConfig reads generate_content_config.
func (l *loader) parseContentConfig(v val) *genai.GenerateContentConfig {
	if v.isNull() {
		return nil
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of genai GenerateContentConfig fields, got %s", v.kind()))
		return nil
	}
	// google-adk's LlmAgent refuses these: each has its own agent field.
	for _, e := range entries {
		switch snake(e.key) {
		case "tools":
			l.add(e.keyAt.errf("tools go in the agent's tools, not in generate_content_config"))
			return nil
		case "system_instruction":
			l.add(e.keyAt.errf("the system instruction goes in the agent's instruction, not in generate_content_config"))
			return nil
		case "response_schema":
			l.add(e.keyAt.errf("the response schema goes in the agent's output_schema, not in generate_content_config"))
			return nil
		}
	}
	cfg := &genai.GenerateContentConfig{}
	if !l.decodeTyped(v, cfg) {
		return nil
	}
	if cfg.HTTPOptions != nil && cfg.HTTPOptions.BaseURL != "" {
		l.add(v.errf("http_options.base_url is a transport setting of the model backend, not of generate_content_config"))
		return nil
	}
	return cfg
}

// parseStaticInstruction reads static_instruction, a genai ContentUnion:
// a string, a Content, a Part, or a list of strings and Parts.
func (l *loader) parseStaticInstruction(v val) *genai.Content {
	if v.isNull() {
		return nil
	}
	if s, ok := v.str(); ok {
		return genai.NewContentFromText(s, genai.RoleUser)
	}
	if items, ok := v.list(); ok {
		c := &genai.Content{Role: genai.RoleUser}
		for _, item := range items {
			if s, ok := item.str(); ok {
				c.Parts = append(c.Parts, &genai.Part{Text: s})
				continue
			}
			p := &genai.Part{}
			if !l.decodeTyped(item, p) {
				return nil
			}
			c.Parts = append(c.Parts, p)
		}
		return c
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a string, a Content, a Part or a list of parts, got %s", v.kind()))
		return nil
	}
	for _, e := range entries {
		if e.key == "parts" || e.key == "role" {
			c := &genai.Content{}
			if !l.decodeTyped(v, c) {
				return nil
			}
			return c
		}
	}
	p := &genai.Part{}
	if !l.decodeTyped(v, p) {
		return nil
	}
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{p}}
}

// parseOutputSchema reads output_schema as a JSON Schema. google-adk's
// form, a reference to a Python class, cannot work here.
func (l *loader) parseOutputSchema(v val) map[string]any {
	if v.isNull() {
		return nil
	}
	if s, ok := v.str(); ok {
		l.add(v.errf("not supported: Python code references (%s); write the JSON Schema itself, e.g. {type: object, properties: {...}}", s))
		return nil
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a JSON Schema mapping, got %s", v.kind()))
		return nil
	}
	if len(entries) == 1 && entries[0].key == "name" {
		if s, ok := entries[0].val.str(); ok {
			l.add(v.errf("not supported: Python code references (%s); write the JSON Schema itself, e.g. {type: object, properties: {...}}", s))
			return nil
		}
	}
	m, _ := v.plain().(map[string]any)
	return m
}

// decodeTyped fills out (a pointer to a genai struct) from v.
func (l *loader) decodeTyped(v val, out any) bool {
	plain, ok := l.typed(v, reflect.TypeOf(out).Elem())
	if !ok {
		return false
	}
	data, err := json.Marshal(plain)
	if err != nil {
		l.add(v.wrap(err, "%v", err))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		l.add(v.wrap(err, "%v", err))
		return false
	}
	return true
}

var byteSlice = reflect.TypeOf([]byte(nil))

// typed converts v to plain values shaped for t's JSON decoding.
func (l *loader) typed(v val, t reflect.Type) (any, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v.isNull() {
		return nil, true
	}
	switch {
	case t == byteSlice:
		// Bytes are base64 in JSON, as in google-adk's YAML.
		if _, ok := v.str(); !ok {
			l.add(v.errf("want base64 text, got %s", v.kind()))
			return nil, false
		}
		return v.plain(), true
	case t.Kind() == reflect.Struct:
		return l.typedStruct(v, t)
	case t.Kind() == reflect.Map:
		entries, ok := v.mapping()
		if !ok {
			l.add(v.errf("want a mapping, got %s", v.kind()))
			return nil, false
		}
		out := map[string]any{}
		good := true
		for _, e := range entries {
			x, ok := l.typed(e.val, t.Elem())
			good = good && ok
			out[e.key] = x
		}
		return out, good
	case t.Kind() == reflect.Slice:
		items, ok := v.list()
		if !ok {
			l.add(v.errf("want a list, got %s", v.kind()))
			return nil, false
		}
		out := make([]any, len(items))
		good := true
		for i, item := range items {
			x, ok := l.typed(item, t.Elem())
			good = good && ok
			out[i] = x
		}
		return out, good
	case t.Kind() == reflect.String:
		if _, ok := v.str(); !ok {
			l.add(v.errf("want a string, got %s", v.kind()))
			return nil, false
		}
	case t.Kind() == reflect.Bool:
		if _, ok := v.boolean(); !ok {
			l.add(v.errf("want true or false, got %s", v.kind()))
			return nil, false
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		if _, ok := v.integer(); !ok {
			l.add(v.errf("want an integer, got %s", v.kind()))
			return nil, false
		}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		if _, ok := v.number(); !ok {
			l.add(v.errf("want a number, got %s", v.kind()))
			return nil, false
		}
	}
	// Interfaces (JSON Schemas, free values) and checked scalars.
	return v.plain(), true
}

// typedStruct converts a mapping for struct t, accepting each field's
// JSON name and its snake_case form.
func (l *loader) typedStruct(v val, t reflect.Type) (any, bool) {
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping, got %s", v.kind()))
		return nil, false
	}
	fields := map[string]reflect.StructField{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		fields[name] = f
		fields[snake(name)] = f
		names = append(names, snake(name))
	}
	out := map[string]any{}
	good := true
	for _, e := range entries {
		f, ok := fields[e.key]
		if !ok {
			l.add(e.keyAt.errf("unknown field %q of genai %s%s", e.key, t.Name(), didYouMean(e.key, names)))
			good = false
			continue
		}
		x, ok := l.typed(e.val, f.Type)
		good = good && ok
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[name] = x
	}
	return out, good
}

// snake converts a camelCase JSON name to snake_case ("responseMimeType"
// to "response_mime_type"); snake_case input comes back unchanged.
func snake(s string) string {
	var sb strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				sb.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

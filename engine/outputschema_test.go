package engine

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestStripCodeFence(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"a\": 1}\n```":  `{"a": 1}`,
		"  ```JSON {\"a\": 1}```  ": `{"a": 1}`,
		"```\n[1, 2]\n```":          `[1, 2]`,
		"{\"a\": 1}":                `{"a": 1}`,
		"```json\n{\"a\": 1}":       "```json\n{\"a\": 1}", // unclosed: unchanged
		"``````":                    ``,
		"text ```json {} ``` after": "text ```json {} ``` after",
	} {
		if got := stripCodeFence(in); got != want {
			t.Errorf("stripCodeFence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateOutput(t *testing.T) {
	schema := map[string]any{
		"title": "Order", "type": "object",
		"properties": map[string]any{
			"n":    map[string]any{"type": "integer"},
			"x":    map[string]any{"anyOf": []any{map[string]any{"type": "number"}, map[string]any{"type": "null"}}, "default": nil},
			"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
		"required": []any{"n", "tags"},
	}
	got, order, err := validateOutput(schema, nil, "```json\n{\"n\": \"7\", \"x\": 2, \"tags\": [\"a\"], \"extra\": 1}\n```")
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	if m["n"] != int64(7) || m["x"] != json.Number("2.0") || len(m) != 3 || order != nil {
		t.Errorf("validated = %#v, key order %s (want none: sorted without the schema's order)", m, order)
	}
	_, _, err = validateOutput(schema, nil, `{"n": 1.5, "tags": "a"}`)
	var ve *OutputValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 2 || ve.ErrorCode() != "ValidationError" {
		t.Fatalf("err = %v", err)
	}
	want := "2 validation errors for Order\nn\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float\ntags\n  Input should be a valid array [type=list_type, input_value='a', input_type=str]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/list_type"
	if err.Error() != want {
		t.Errorf("message:\n%s\nwant:\n%s", err, want)
	}
}

// TestValidateOutputLaxValues: single-field answers against pydantic
// 2.14's model_validate_json (JSON mode, the messages google-adk's
// validate_schema raises), as measured in google-adk 2.13's venv: the
// value stored, or the error type.
func TestValidateOutputLaxValues(t *testing.T) {
	schema := map[string]any{
		"title": "Rec", "type": "object",
		"properties": map[string]any{
			"i": map[string]any{"type": "integer"}, "f": map[string]any{"type": "number"},
			"b": map[string]any{"type": "boolean"}, "l": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
			"d": map[string]any{"type": "object"},
		},
		"required": []any{},
	}
	for _, c := range []struct {
		in   string
		want any // the stored value, or the error type (a string "!type")
	}{
		{`{"i": "1_000"}`, int64(1000)}, {`{"i": " +1_0 "}`, int64(10)}, {`{"i": "12.000"}`, int64(12)},
		{`{"i": "1_000.0"}`, int64(1000)}, {`{"i": "0012"}`, int64(12)}, {`{"i": " 12"}`, int64(12)},
		{`{"i": "1__0"}`, "!int_parsing"}, {`{"i": "1_"}`, "!int_parsing"}, {`{"i": "12."}`, "!int_parsing"},
		{`{"i": "inf"}`, "!int_parsing"}, {`{"i": "Infinity"}`, "!int_parsing"}, {`{"i": "1e3"}`, "!int_parsing"},
		{`{"i": "99999999999999999999999"}`, json.Number("99999999999999999999999")},
		{`{"i": "-99999999999999999999999.0"}`, json.Number("-99999999999999999999999")},
		{`{"i": 99999999999999999999999}`, json.Number("99999999999999999999999")},
		{`{"i": 1e3}`, int64(1000)}, {`{"i": 1e30}`, "!int_parsing_size"}, {`{"i": -1e19}`, "!int_parsing_size"},
		{`{"i": true}`, int64(1)},
		{`{"f": "1_0.5_5"}`, 10.55}, {`{"f": "+1_0"}`, json.Number("10.0")}, {`{"f": " 1_0 "}`, "!float_parsing"}, {`{"f": " 2 "}`, json.Number("2.0")},
		{`{"f": "12."}`, json.Number("12.0")}, {`{"f": ".5"}`, 0.5}, {`{"f": "0x10"}`, "!float_parsing"},
		// A whole float stays a float: a json.Number of its repr.
		{`{"f": 12345678901234567890}`, json.Number("1.2345678901234567e+19")}, {`{"f": 3}`, json.Number("3.0")},
		{`{"b": 2.0}`, "!bool_parsing"}, {`{"b": 1.5}`, "!bool_type"}, {`{"b": 1e30}`, "!bool_type"},
		{`{"b": 10000000000000000000000}`, "!bool_type"}, {`{"b": 2}`, "!bool_parsing"}, {`{"b": " yes"}`, "!bool_parsing"},
		{`{"b": "Y"}`, true}, {`{"b": -0.0}`, false},
		{`{"l": {"a": 1}}`, "!list_type"}, {`{"d": 1}`, "!dict_type"}, {`[1]`, "!model_type"},
	} {
		got, _, err := validateOutput(schema, nil, c.in)
		if want, isErr := c.want.(string); isErr {
			var ve *OutputValidationError
			if !errors.As(err, &ve) || len(ve.Errors) != 1 || "!"+ve.Errors[0].kind != want {
				t.Errorf("%s: got %#v, %v; want %s", c.in, got, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		for _, v := range got.(map[string]any) {
			if v != c.want {
				t.Errorf("%s: stored %#v (%T), want %#v", c.in, v, v, c.want)
			}
		}
	}
	// The messages are JSON mode's (in the properties' order: sorted here,
	// without the schema's key order); a whole-input error has no location
	// line.
	_, _, err := validateOutput(schema, nil, `{"l": "x", "d": [1]}`)
	want := "2 validation errors for Rec\nd\n  Input should be an object [type=dict_type, input_value=[1], input_type=list]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/dict_type\nl\n  Input should be a valid array [type=list_type, input_value='x', input_type=str]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/list_type"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n%v\nwant:\n%s", err, want)
	}
	// The input of an error prints as the model wrote it: dicts in its key
	// order, floats as floats.
	_, _, err = validateOutput(schema, nil, `{"l": {"z": 2.0, "a": [1, {"y": 1, "b": 0}]}}`)
	want = "1 validation error for Rec\nl\n  Input should be a valid array [type=list_type, input_value={'z': 2.0, 'a': [1, {'y': 1, 'b': 0}]}, input_type=dict]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/list_type"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n%v\nwant:\n%s", err, want)
	}
	_, _, err = validateOutput(schema, nil, `[1, 2]`)
	want = "1 validation error for Rec\n  Input should be an object [type=model_type, input_value=[1, 2], input_type=list]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/model_type"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n%v\nwant:\n%s", err, want)
	}
}

// TestValidateOutputKeyOrder: the validated object's keys follow the
// schema's declared property order (its key order as written), nested
// models reached through $ref and array items included.
func TestValidateOutputKeyOrder(t *testing.T) {
	schema := map[string]any{
		"title": "Person", "type": "object",
		"properties": map[string]any{
			"name":    map[string]any{"type": "string"},
			"address": map[string]any{"$ref": "#/$defs/Address"},
			"pets":    map[string]any{"anyOf": []any{map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Pet"}}, map[string]any{"type": "null"}}},
		},
		"$defs": map[string]any{
			"Address": map[string]any{"type": "object", "title": "Address", "properties": map[string]any{"zip": map[string]any{"type": "string"}, "city": map[string]any{"type": "string"}}},
			"Pet":     map[string]any{"type": "object", "title": "Pet", "properties": map[string]any{"species": map[string]any{"type": "string"}, "alias": map[string]any{"type": "string"}}},
		},
	}
	written := json.RawMessage(`{"title":0,"type":0,"properties":{"name":0,"address":0,"pets":{"anyOf":[{"items":0},0]}},
		"$defs":{"Address":{"properties":{"zip":0,"city":0}},"Pet":{"properties":{"species":0,"alias":0}}}}`)
	_, order, err := validateOutput(schema, written, `{"pets": [{"alias": "Rex", "species": "dog"}], "address": {"city": "Oslo", "zip": "0150"}, "name": "Ada"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":0,"address":{"zip":0,"city":0},"pets":[{"species":0,"alias":0}]}`; string(order) != want {
		t.Errorf("key order = %s, want %s", order, want)
	}
}

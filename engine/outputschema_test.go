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
	if m["n"] != int64(7) || m["x"] != 2.0 || len(m) != 3 || order != nil {
		t.Errorf("validated = %#v, key order %s (want none: sorted without the schema's order)", m, order)
	}
	_, _, err = validateOutput(schema, nil, `{"n": 1.5, "tags": "a"}`)
	var ve *OutputValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 2 || ve.ErrorCode() != "ValidationError" {
		t.Fatalf("err = %v", err)
	}
	want := "2 validation errors for Order\nn\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float\ntags\n  Input should be a valid list [type=list_type, input_value='a', input_type=str]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/list_type"
	if err.Error() != want {
		t.Errorf("message:\n%s\nwant:\n%s", err, want)
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

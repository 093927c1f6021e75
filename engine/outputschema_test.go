package engine

import (
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
	got, err := validateOutput(schema, "```json\n{\"n\": \"7\", \"x\": 2, \"tags\": [\"a\"], \"extra\": 1}\n```")
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	if m["n"] != int64(7) || m["x"] != 2.0 || len(m) != 3 {
		t.Errorf("validated = %#v", m)
	}
	_, err = validateOutput(schema, `{"n": 1.5, "tags": "a"}`)
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

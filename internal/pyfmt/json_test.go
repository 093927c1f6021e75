package pyfmt

import (
	"encoding/json"
	"testing"
)

func TestJSONDumps(t *testing.T) {
	// Expected values are Python 3.11's json.dumps(v, ensure_ascii=False).
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[string]any{"temperature": 21.5, "city": "Oslo"}, `{"city": "Oslo", "temperature": 21.5}`},
		{[]any{1.0, 2.5, nil, true, "x"}, `[1, 2.5, null, true, "x"]`},
		{json.Number("36"), `36`},
		{json.Number("36.0"), `36.0`},
		{1e300, `1e+300`},
		{"<a&b> é \u2028 \"q\" \\ \n\x01", `"<a&b> é ` + "\u2028" + ` \"q\" \\ \n\u0001"`},
		{map[string]any{}, `{}`},
		{[]any{}, `[]`},
		{map[string]any{"n": map[string]any{"b": []any{}, "a": nil}}, `{"n": {"a": null, "b": []}}`},
		{struct {
			X int `json:"x"`
		}{3}, `{"x": 3}`},
	} {
		got, err := JSONDumps(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("JSONDumps(%#v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if _, err := JSONDumps(func() {}); err == nil {
		t.Error("JSONDumps(func) succeeded, want an error")
	}
}

func TestJSONString(t *testing.T) {
	for in, want := range map[string]string{
		`a"b\c`:       `"a\"b\\c"`,
		"é\u2028\x1f": "\"é\u2028\\u001f\"",
		"bad\xffutf8": "\"bad\xffutf8\"", // invalid bytes pass through as they are
	} {
		if got := JSONString(in); got != want {
			t.Errorf("JSONString(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExactNumbers(t *testing.T) {
	got := ExactNumbers(map[string]any{"i": json.Number("21"), "f": json.Number("0.5"), "l": []any{json.Number("-3"), json.Number("1e3")}, "s": "x"})
	m := got.(map[string]any)
	l := m["l"].([]any)
	if m["i"] != int64(21) || m["f"] != 0.5 || l[0] != int64(-3) || l[1] != 1000.0 || m["s"] != "x" {
		t.Fatalf("ExactNumbers = %#v", got)
	}
	// Beyond int64 an integer keeps its digits, as Python's int does; a
	// float literal that large is a float.
	big := ExactNumbers([]any{json.Number("99999999999999999999999"), json.Number("-9223372036854775809"), json.Number("1e23")}).([]any)
	if big[0] != json.Number("99999999999999999999999") || big[1] != json.Number("-9223372036854775809") || big[2] != 1e23 {
		t.Fatalf("ExactNumbers of large numbers = %#v", big)
	}
}

func TestJSONDumpsASCII(t *testing.T) {
	// Python 3.11: json.dumps({"a": "é😀\x7f~", "b": [1]}).
	got, err := JSONDumpsASCII(map[string]any{"a": "é😀\x7f~", "b": []any{1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a": "\u00e9\ud83d\ude00\u007f~", "b": [1]}`; got != want {
		t.Errorf("JSONDumpsASCII = %s, want %s", got, want)
	}
	if _, err := JSONDumpsASCII(func() {}); err == nil {
		t.Error("JSONDumpsASCII(func) succeeded, want an error")
	}
}

func TestJSONDumpsOrdered(t *testing.T) {
	v := map[string]any{"name": "Ada", "age": 36, "tags": []any{map[string]any{"b": 1, "a": 2}}}
	got, err := JSONDumpsOrdered(v, json.RawMessage(`{"name":0,"age":0,"tags":[{"b":0,"a":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name": "Ada", "age": 36, "tags": [{"b": 1, "a": 2}]}`; got != want {
		t.Fatalf("JSONDumpsOrdered = %s, want %s", got, want)
	}
}

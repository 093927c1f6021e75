package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expected messages are pydantic 2.14's (model_validate_json of a
// model, google-adk 2.13's venv), after "Invalid JSON: ".
func TestJSONSyntaxErrorMatchesPydantic(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`after both`, "expected value at line 1 column 1"},
		{``, "EOF while parsing a value at line 1 column 0"},
		{`   `, "EOF while parsing a value at line 1 column 3"},
		{`{"city": "Rome"`, "EOF while parsing an object at line 1 column 15"},
		{`{"city": "Rome"} trailing`, "trailing characters at line 1 column 18"},
		{`{'city': 'x'}`, "key must be a string at line 1 column 2"},
		{`[1,2`, "EOF while parsing a list at line 1 column 4"},
		{`nul`, "EOF while parsing a value at line 1 column 3"},
		{`{"city": "Rome", "temp": 1.5,}`, "trailing comma at line 1 column 30"},
		{`{"a":`, "EOF while parsing a value at line 1 column 5"},
		{`12abc`, "trailing characters at line 1 column 3"},
		{`{"city": "a\q"}`, "invalid escape at line 1 column 13"},
		{`é`, "expected value at line 1 column 1"},
		{`{"a" 1}`, "expected `:` at line 1 column 6"},
		{`{"a":1 "b":2}`, "expected `,` or `}` at line 1 column 8"},
		{`[1 2]`, "expected `,` or `]` at line 1 column 4"},
		{`{"a":}`, "expected value at line 1 column 6"},
		{"\"\x01\"", `control character (\u0000-\u001F) found while parsing a string at line 1 column 2`},
		{`{"a":tru}`, "expected ident at line 1 column 9"},
		{`{"a":01}`, "invalid number at line 1 column 7"},
		{`-`, "EOF while parsing a value at line 1 column 1"},
		{`1.`, "EOF while parsing a value at line 1 column 2"},
		{`1e`, "EOF while parsing a value at line 1 column 2"},
		{`"\ud800"`, "unexpected end of hex escape at line 1 column 8"},
		{`"\ud8000"`, "unexpected end of hex escape at line 1 column 8"},
		{`"\ud800\u0041"`, "lone leading surrogate in hex escape at line 1 column 13"},
		{`"\udc00"`, "lone leading surrogate in hex escape at line 1 column 7"},
		{`"\ud800\""`, "unexpected end of hex escape at line 1 column 9"},
		{`"\ud800\ud800"`, "lone leading surrogate in hex escape at line 1 column 13"},
		{`"\uZZZZ"`, "invalid escape at line 1 column 4"},
		{`{"a":1,}`, "trailing comma at line 1 column 8"},
		{`[1,]`, "trailing comma at line 1 column 4"},
		{`{,}`, "key must be a string at line 1 column 2"},
		{`[,1]`, "expected value at line 1 column 2"},
		{"{\"a\":1}\n x", "trailing characters at line 2 column 2"},
		{"\n\n  x", "expected value at line 3 column 3"},
		{"{\n\"a\":\n}", "expected value at line 3 column 1"},
		{`"abc`, "EOF while parsing a string at line 1 column 4"},
		{`nulx`, "expected ident at line 1 column 4"},
		{`[`, "EOF while parsing a list at line 1 column 1"},
		{`{`, "EOF while parsing an object at line 1 column 1"},
		{`{"a"`, "EOF while parsing an object at line 1 column 4"},
		{`{"a":1`, "EOF while parsing an object at line 1 column 6"},
		{`[1,`, "EOF while parsing a value at line 1 column 3"},
		{`{"a":1,`, "EOF while parsing a value at line 1 column 7"},
		{`"\`, "EOF while parsing a string at line 1 column 2"},
		{` {"a": [1, {"b": }]}`, "expected value at line 1 column 18"},
		{`{"a":-}`, "invalid number at line 1 column 7"},
		{`{"a":1.5e}`, "invalid number at line 1 column 10"},
		{`"éé" x`, "trailing characters at line 1 column 8"},
		{`{"é": x}`, "expected value at line 1 column 8"},
		{`"é`, "EOF while parsing a string at line 1 column 3"},
		{"{\"a\": \"\t\"}", `control character (\u0000-\u001F) found while parsing a string at line 1 column 8`},
		{`{"a": {"b": [1, 2}}`, "expected `,` or `]` at line 1 column 18"},
		{`{"a": tru`, "EOF while parsing a value at line 1 column 9"},
		{`{"city": "x"} {"city": "y"}`, "trailing characters at line 1 column 15"},
		{"\t\n", "EOF while parsing a value at line 2 column 0"},
		{`{"a":NaN,"b":-Infinity}`, ""},
		{`{"a": [1, -2.5e-3, "x\n\u00e9\ud83d\ude00", true, null, {}]}`, ""},
	} {
		if got := jsonSyntaxError(c.in); got != c.want {
			t.Errorf("jsonSyntaxError(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// pydantic cuts an input_value repr longer than 50 bytes.
func TestInputReprTruncatesLikePydantic(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{strings.Repeat("a", 48), "'" + strings.Repeat("a", 48) + "'"},
		{strings.Repeat("a", 49), "'" + strings.Repeat("a", 24) + "..." + strings.Repeat("a", 23) + "'"},
		{"a" + strings.Repeat("é", 60), "'a" + strings.Repeat("é", 11) + "..." + strings.Repeat("é", 11) + "'"},
		{strings.Repeat("é", 60) + "a", "'" + strings.Repeat("é", 12) + "..." + strings.Repeat("é", 11) + "a'"},
		{"ab" + strings.Repeat("€", 30), "'ab" + strings.Repeat("€", 7) + "..." + strings.Repeat("€", 7) + "'"},
	} {
		if got := inputRepr(c.in, nil); got != c.want {
			t.Errorf("inputRepr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzJSONSyntaxError: whatever encoding/json takes as one value the
// scanner takes, but for lone surrogates (which encoding/json replaces and
// jiter refuses), and what the scanner takes encoding/json takes, but for
// jiter's NaN and Infinity.
func FuzzJSONSyntaxError(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x"]}`, `[`, `"\ud800\udc00"`, `-0.0e+1`, `{"a":NaN}`, "\x00", `[[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msg := jsonSyntaxError(s)
		valid := json.Valid([]byte(s))
		if valid && msg != "" && !strings.Contains(msg, "hex escape") {
			t.Fatalf("%q is JSON, scanner says %q", s, msg)
		}
		if !valid && msg == "" && !strings.Contains(s, "NaN") && !strings.Contains(s, "Infinity") {
			t.Fatalf("%q is not JSON, scanner took it", s)
		}
	})
}

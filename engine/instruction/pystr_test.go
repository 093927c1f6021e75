package instruction

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
)

type testStruct struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
}

type testStringer string

func (s testStringer) String() string { return string(s) }

type (
	namedString string
	namedInt    int
)

func addF(a, b float64) float64 { return a + b }

func ptr[T any](v T) *T { return &v }

func recursiveList() []any {
	a := make([]any, 2)
	a[0] = 1
	a[1] = a
	return a
}

func recursiveMap() map[string]any {
	m := map[string]any{"a": 1}
	m["self"] = m
	return m
}

// Expected strings are Python 3.11's str() of the corresponding Python
// value (see PyStr for the mapping).
var pyStrCases = []struct {
	in   any
	want string
}{
	{nil, "None"},
	{true, "True"},
	{false, "False"},
	{0, "0"},
	{-17, "-17"},
	{int64(math.MaxInt64), "9223372036854775807"},
	{uint64(math.MaxUint64), "18446744073709551615"},
	{int8(-128), "-128"},
	{uint8(255), "255"},
	{0.0, "0.0"},
	{negZero(), "-0.0"},
	{1.0, "1.0"},
	{5.0, "5.0"},
	{0.1, "0.1"},
	{addF(0.1, 0.2), "0.30000000000000004"},
	{2.5, "2.5"},
	{-3.75, "-3.75"},
	{1e15, "1000000000000000.0"},
	{1e16, "1e+16"},
	{1.5e16, "1.5e+16"},
	{123456789012345678.0, "1.2345678901234568e+17"},
	{9999999999999998.0, "9999999999999998.0"},
	{1e22, "1e+22"},
	{1e100, "1e+100"},
	{1.7976931348623157e308, "1.7976931348623157e+308"},
	{5e-324, "5e-324"},
	{0.0001, "0.0001"},
	{0.00001, "1e-05"},
	{0.000123, "0.000123"},
	{1.5e-7, "1.5e-07"},
	{123.456, "123.456"},
	{1234567.0, "1234567.0"},
	{math.Inf(1), "inf"},
	{math.Inf(-1), "-inf"},
	{math.NaN(), "nan"},
	{float32(0.1), "0.10000000149011612"},
	{float32(1.5), "1.5"},
	{complex(1, 2), "(1+2j)"},
	{complex(0, 2), "2j"},
	{complex(0, -2), "-2j"},
	{complex(1.5, -0.5), "(1.5-0.5j)"},
	{complex(negZero(), 1), "(-0+1j)"},
	{complex(1e20, 1), "(1e+20+1j)"},
	{complex(0, math.Inf(1)), "infj"},
	{"", ""},
	{"plain", "plain"},
	{"it's", "it's"},
	{`say "hi"`, "say \"hi\""},
	{[]any{""}, "['']"},
	{[]any{"it's"}, "[\"it's\"]"},
	{[]any{`say "hi"`}, "['say \"hi\"']"},
	{[]any{`both ' and "`}, "['both \\' and \"']"},
	{[]any{"a\\b"}, "['a\\\\b']"},
	{[]any{"\t\n\r\x00\x1f\x7f"}, "['\\t\\n\\r\\x00\\x1f\\x7f']"},
	{[]any{"\u0080\u009f\u00a0\u00ad\u00e9"}, "['\\x80\\x9f\\xa0\\xadé']"},
	{[]any{"\u200b\u2028\u3000\ufeff\uffff"}, "['\\u200b\\u2028\\u3000\\ufeff\\uffff']"},
	{[]any{"\U0001F600\U000E0001\U0010FFFF\U0001FAE8"}, "['😀\\U000e0001\\U0010ffff\\U0001fae8']"},
	{[]any{"日本語", "ñ"}, "['日本語', 'ñ']"},
	{[]any{}, "[]"},
	{[]int(nil), "[]"},
	{[]int{1, 2, 3}, "[1, 2, 3]"},
	{[2]string{"a", "b"}, "['a', 'b']"},
	{[]any{1, 2.0, "x", nil, true, []any{}, map[string]any{}}, "[1, 2.0, 'x', None, True, [], {}]"},
	{map[string]any{}, "{}"},
	{map[string]int(nil), "{}"},
	{map[string]any{"b": 1, "a": 2, "c": []any{"x"}}, "{'a': 2, 'b': 1, 'c': ['x']}"},
	{map[string]any{"B": 1, "a": 2, "_": 3, "é": 4, "Z": 5}, "{'B': 1, 'Z': 5, '_': 3, 'a': 2, 'é': 4}"},
	{map[int]string{10: "x", 2: "y", -1: "z"}, "{-1: 'z', 2: 'y', 10: 'x'}"},
	{map[string]any{"k'": "v\n"}, "{\"k'\": 'v\\n'}"},
	{map[string]any{"outer": map[string]any{"inner": []any{1.5, map[string]any{"deep": nil}}}}, "{'outer': {'inner': [1.5, {'deep': None}]}}"},
	{[]byte("abc"), "b'abc'"},
	{[]byte{}, "b''"},
	{[]byte("\x00\xff'\""), "b'\\x00\\xff\\'\"'"},
	{[]byte("it's"), "b\"it's\""},
	{[]byte("\t\n\r\\\x7f\x80"), "b'\\t\\n\\r\\\\\\x7f\\x80'"},
	{[]any{[]byte("x")}, "[b'x']"},
	{json.Number("5"), "5"},
	{json.Number("-0"), "0"},
	{json.Number("12345678901234567890123"), "12345678901234567890123"},
	{json.Number("5.0"), "5.0"},
	{json.Number("1e3"), "1000.0"},
	{json.Number("1E400"), "inf"},
	{json.Number("-2.50"), "-2.5"},
	{json.Number("1e-400"), "0.0"},
	{json.RawMessage(`{"b": [1, 2.0], "a": null}`), "{'a': None, 'b': [1, 2.0]}"},
	{[]any{json.RawMessage(`"s"`)}, "['s']"},
	{testStruct{Name: "n", Count: 3, Tags: []string{"t"}}, "{'count': 3, 'name': 'n', 'tags': ['t']}"},
	{&testStruct{Name: "p"}, "{'count': 0, 'name': 'p', 'tags': None}"},
	{(*testStruct)(nil), "None"},
	{(*int)(nil), "None"},
	{ptr(7), "7"},
	{errors.New("boom"), "boom"},
	{testStringer("custom"), "custom"},
	{[]any{testStringer("custom")}, "[custom]"},
	{namedString("n"), "n"},
	{[]namedString{"n"}, "['n']"},
	{namedInt(4), "4"},
	{big.NewInt(-99), "-99"},
	{recursiveList(), "[1, [...]]"},
	{recursiveMap(), "{'a': 1, 'self': {...}}"},
}

func TestPyStr(t *testing.T) {
	for _, c := range pyStrCases {
		if got := PyStr(c.in); got != c.want {
			t.Errorf("PyStr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPyRepr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"plain", "'plain'"},
		{"it's", `"it's"`},
		{`it's "x"`, `'it\'s "x"'`},
		{"", "''"},
		{namedString("a\nb"), `'a\nb'`},
		{5, "5"},
		{2.0, "2.0"},
		{nil, "None"},
		{[]any{"a"}, "['a']"},
	}
	for _, c := range cases {
		if got := PyRepr(c.in); got != c.want {
			t.Errorf("PyRepr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIsValidStateName(t *testing.T) {
	cases := map[string]bool{
		"x": true, "_": true, "_x1": true, "café": true, "Ⅻ": true, "x·y": true,
		"app:x": true, "user:x": true, "temp:x": true,
		"": false, "1x": false, "a b": false, "a-b": false, "a.b": false,
		"app:": false, ":x": false, "foo:x": false, "app:x:y": false, "app:1": false,
		"App:x": false, "\u0e33": false, "x\u0e33": true, "\u309b": false,
		"x\xff": false, "x\ufffd": false,
	}
	for in, want := range cases {
		if got := IsValidStateName(in); got != want {
			t.Errorf("IsValidStateName(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestPyStrip(t *testing.T) {
	in := "\t\n\v\f\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x y\u200b"
	if got, want := pyStrip(in), "x y\u200b"; got != want {
		t.Errorf("pyStrip = %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	k := &MissingKeyError{Key: "user_name", Agent: "assistant"}
	if got, want := k.Message(), "Context variable not found: `user_name` in agent 'assistant'."; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := k.Error(), "\"Context variable not found: `user_name` in agent 'assistant'.\""; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	a := &MissingArtifactError{Name: "f.txt", Agent: "root"}
	if got, want := a.Error(), `"Artifact 'f.txt' not found in agent 'root'."`; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	// Python's repr switches quotes only when the text has no double quote.
	q := &MissingKeyError{Key: "k", Agent: `a"b`}
	if got, want := q.Error(), "'Context variable not found: `k` in agent \\'a\"b\\'.'"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	var pe PythonError
	if !errors.As(ErrNoArtifactService, &pe) || pe.PythonType() != "ValueError" || pe.Error() != "Artifact service is not initialized." {
		t.Errorf("ErrNoArtifactService = %v", ErrNoArtifactService)
	}
}

func TestJSONRoundTripKeepsIntsWithUseNumber(t *testing.T) {
	var plain any
	if err := json.Unmarshal([]byte(`{"n": 5}`), &plain); err != nil {
		t.Fatal(err)
	}
	// Documented: encoding/json's float64 prints as a Python float.
	if got := PyStr(plain); got != "{'n': 5.0}" {
		t.Errorf("PyStr(float64 JSON) = %q", got)
	}
	if got := PyStr(json.RawMessage(`{"n": 5}`)); got != "{'n': 5}" {
		t.Errorf("PyStr(RawMessage) = %q", got)
	}
}

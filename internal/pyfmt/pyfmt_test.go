package pyfmt

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"unicode"
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
	namedFloat  float64
)

func addF(a, b float64) float64 { return a + b }

func ptr[T any](v T) *T { return &v }

func negZero() float64 { return math.Copysign(0, -1) }

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

func recursiveTyped() map[string][]any {
	m := map[string][]any{}
	m["x"] = []any{m}
	return m
}

// Expected strings are CPython 3.11's str() of the corresponding Python
// value (see the package documentation for the mapping).
var strCases = []struct {
	in   any
	want string
}{
	{nil, "None"},
	{true, "True"},
	{false, "False"},
	{0, "0"},
	{-17, "-17"},
	{int64(1) << 62, "4611686018427387904"},
	{int64(math.MaxInt64), "9223372036854775807"},
	{uint64(math.MaxUint64), "18446744073709551615"},
	{int8(-128), "-128"},
	{uint8(255), "255"},
	{namedInt(4), "4"},
	{big.NewInt(-99), "-99"},
	{(*big.Int)(nil), "None"},

	// Go floats holding whole numbers within ±2^53 were most likely JSON
	// integers, which Python keeps as ints (see "Numbers" in the package
	// documentation).
	{0.0, "0"},
	{1.0, "1"},
	{3.0, "3"},
	{-7.0, "-7"},
	{1e15, "1000000000000000"},
	{1234567.0, "1234567"},
	{9007199254740992.0, "9007199254740992"}, // 2^53
	{-9007199254740992.0, "-9007199254740992"}, // -2^53
	{9007199254740994.0, "9007199254740994.0"}, // 2^53+2: beyond exact ints
	{9999999999999998.0, "9999999999999998.0"},
	{negZero(), "-0.0"}, // no integer encodes to -0
	{float32(2), "2"},
	{namedFloat(6), "6"},
	{[]any{1, 2.0, "x", nil, true, []any{}, map[string]any{}}, "[1, 2, 'x', None, True, [], {}]"},

	// Other floats print as Python's repr(float).
	{0.1, "0.1"},
	{addF(0.1, 0.2), "0.30000000000000004"},
	{2.5, "2.5"},
	{-3.75, "-3.75"},
	{-0.5, "-0.5"},
	{1e15 + 0.5, "1000000000000000.5"},
	{123456789.125, "123456789.125"},
	{1e16, "1e+16"},
	{1e21, "1e+21"},
	{1e100, "1e+100"},
	{1.5e-5, "1.5e-05"},
	{0.0001, "0.0001"},
	{math.Inf(1), "inf"},
	{math.Inf(-1), "-inf"},
	{math.NaN(), "nan"},
	{float32(0.1), "0.10000000149011612"},
	{float32(0.5), "0.5"},
	{namedFloat(0.25), "0.25"},

	{complex(1, 2), "(1+2j)"},
	{complex(0, 2), "2j"},
	{complex(0, -2), "-2j"},
	{complex(1.5, -0.5), "(1.5-0.5j)"},
	{complex(negZero(), 1), "(-0+1j)"},
	{complex(1e20, 1), "(1e+20+1j)"},
	{complex(0, math.Inf(1)), "infj"},
	{complex64(complex(0.5, 1)), "(0.5+1j)"},

	{json.Number("5"), "5"},
	{json.Number("12"), "12"},
	{json.Number("-0"), "0"},
	{json.Number("123456789012345678901234567890"), "123456789012345678901234567890"},
	{json.Number("5.0"), "5.0"},
	{json.Number("1.0"), "1.0"},
	{json.Number("1e3"), "1000.0"},
	{json.Number("1E400"), "inf"},
	{json.Number("-2.50"), "-2.5"},
	{json.Number("1e-400"), "0.0"},
	{[]any{json.Number("2.0"), json.Number("2")}, "[2.0, 2]"},

	{"", ""},
	{"plain", "plain"},
	{"it's", "it's"},
	{`say "hi"`, "say \"hi\""},
	{namedString("n"), "n"},
	{[]namedString{"n"}, "['n']"},
	{[]any{""}, "['']"},
	{[]any{"it's"}, "[\"it's\"]"},
	{[]any{`say "hi"`}, "['say \"hi\"']"},
	{[]any{`both ' and "`}, "['both \\' and \"']"},
	{[]any{"a\\b"}, "['a\\\\b']"},
	{[]any{"\t\n\r\x00\x1f\x7f"}, "['\\t\\n\\r\\x00\\x1f\\x7f']"},
	{[]any{"\u0080\u009f\u00a0\u00ad\u00e9"}, "['\\x80\\x9f\\xa0\\xadé']"},
	{[]any{"\u200b\u2028\u3000\ufeff\uffff"}, "['\\u200b\\u2028\\u3000\\ufeff\\uffff']"},
	{[]any{"\U0001F600\U000E0001\U0010FFFF\U0001FAE8"}, "['😀\\U000e0001\\U0010ffff\\U0001fae8']"},
	{[]any{"\u0cf3"}, "['\\u0cf3']"}, // Unicode 15.0: unassigned in Python 3.11
	{[]any{"日本語", "ñ"}, "['日本語', 'ñ']"},
	{[]any{"a\xffb"}, "['a\ufffdb']"},

	{[]any{}, "[]"},
	{[]any(nil), "None"},
	{[]int(nil), "None"},
	{[]int{1, 2, 3}, "[1, 2, 3]"},
	{[]string{"a", "b"}, "['a', 'b']"},
	{[2]string{"a", "b"}, "['a', 'b']"},
	{map[string]any{}, "{}"},
	{map[string]any(nil), "None"},
	{map[string]int(nil), "None"},
	{map[string]any{"b": 1, "a": 2, "c": []any{"x"}}, "{'a': 2, 'b': 1, 'c': ['x']}"},
	{map[string]any{"b": []any{true, map[string]any{"c": "d"}}, "a": 1.0}, "{'a': 1, 'b': [True, {'c': 'd'}]}"},
	{map[string]any{"B": 1, "a": 2, "_": 3, "é": 4, "Z": 5}, "{'B': 1, 'Z': 5, '_': 3, 'a': 2, 'é': 4}"},
	{map[string]string{"y": "1", "x": "2"}, "{'x': '2', 'y': '1'}"},
	{map[int]string{10: "x", 2: "y", -1: "z"}, "{-1: 'z', 2: 'y', 10: 'x'}"},
	{map[any]int{"b": 1, 2: 2, 1.5: 3}, "{1.5: 3, 2: 2, 'b': 1}"},
	{map[string]any{"k'": "v\n"}, "{\"k'\": 'v\\n'}"},
	{map[string]any{"outer": map[string]any{"inner": []any{1.5, map[string]any{"deep": nil}}}}, "{'outer': {'inner': [1.5, {'deep': None}]}}"},

	{[]byte("abc"), "b'abc'"},
	{[]byte{}, "b''"},
	{[]byte(nil), "None"},
	{[3]byte{'a', 0, 'b'}, "b'a\\x00b'"},
	{[]byte("\x00\xff'\""), "b'\\x00\\xff\\'\"'"},
	{[]byte("it's"), "b\"it's\""},
	{[]byte("\t\n\r\\\x7f\x80"), "b'\\t\\n\\r\\\\\\x7f\\x80'"},
	{[]any{[]byte("x")}, "[b'x']"},
	{json.RawMessage(`{"b": [1, 2.0], "a": null}`), "{'a': None, 'b': [1, 2.0]}"},
	{[]any{json.RawMessage(`"s"`)}, "['s']"},
	{json.RawMessage(nil), "None"},

	{testStruct{Name: "n", Count: 3, Tags: []string{"t"}}, "{'count': 3, 'name': 'n', 'tags': ['t']}"},
	{&testStruct{Name: "p"}, "{'count': 0, 'name': 'p', 'tags': None}"},
	{(*testStruct)(nil), "None"},
	{(*int)(nil), "None"},
	{ptr(7), "7"},
	{ptr(any(1.5)), "1.5"},
	{errors.New("boom"), "boom"},
	{testStringer("custom"), "custom"},
	{[]any{testStringer("custom")}, "[custom]"},

	{recursiveList(), "[1, [...]]"},
	{recursiveMap(), "{'a': 1, 'self': {...}}"},
	{recursiveTyped(), "{'x': [{...}]}"},
}

func TestStr(t *testing.T) {
	for _, c := range strCases {
		if got := Str(c.in); got != c.want {
			t.Errorf("Str(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRepr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"plain", "'plain'"},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{`it's "x"`, `'it\'s "x"'`},
		{`back\slash`, `'back\\slash'`},
		{"nl\nand\ttab\rcr", `'nl\nand\ttab\rcr'`},
		{"\x00\x1b\x7f", `'\x00\x1b\x7f'`},
		{"\x1c", `'\x1c'`},
		{"\u0080\u00a0\u00ad", `'\x80\xa0\xad'`},
		{"é中文", "'é中文'"},
		{"\u200b\u2028\ufeff\u3000", `'\u200b\u2028\ufeff\u3000'`},
		{"\U0001F600", "'\U0001F600'"},
		{"\U000E0001", `'\U000e0001'`},
		{"", "''"},
		{namedString("a\nb"), `'a\nb'`},
		{json.RawMessage(`"s"`), "'s'"},
		{5, "5"},
		{2.0, "2"},
		{2.5, "2.5"},
		{json.Number("2.0"), "2.0"},
		{nil, "None"},
		{[]any{"a"}, "['a']"},
		{[]byte("hi"), "b'hi'"},
	}
	for _, c := range cases {
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
	// Str and Repr differ only for strings.
	for _, c := range strCases {
		if _, ok := c.in.(string); ok {
			continue
		}
		if _, ok := c.in.(namedString); ok {
			continue
		}
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFloatRepr checks Python's repr(float), which FloatRepr applies even to
// whole numbers.
func TestFloatRepr(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
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
		{0.00001234, "1.234e-05"},
		{0.000123, "0.000123"},
		{1.5e-7, "1.5e-07"},
		{2.5e-7, "2.5e-07"},
		{123.456, "123.456"},
		{1234567.0, "1234567.0"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
		{float64(float32(0.1)), "0.10000000149011612"},
	}
	for _, c := range cases {
		if got := FloatRepr(c.in); got != c.want {
			t.Errorf("FloatRepr(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStringAndBytesRepr(t *testing.T) {
	if got, want := StringRepr("it's \"x\"\n"), `'it\'s "x"\n'`; got != want {
		t.Errorf("StringRepr = %q, want %q", got, want)
	}
	if got, want := BytesRepr([]byte("\x89PNG\r\n")), `b'\x89PNG\r\n'`; got != want {
		t.Errorf("BytesRepr = %q, want %q", got, want)
	}
	if got, want := BytesRepr(nil), "b''"; got != want {
		t.Errorf("BytesRepr(nil) = %q, want %q", got, want)
	}
}

// TestJSONDecodedNumbers shows the number policy on the decoders' output:
// encoding/json's float64 for an integer prints as Python's int would, and
// UseNumber keeps the int/float distinction exactly.
func TestJSONDecodedNumbers(t *testing.T) {
	const doc = `{"n": 5, "f": 5.0, "h": 2.5, "big": 12345678901234567890}`
	var plain any
	if err := json.Unmarshal([]byte(doc), &plain); err != nil {
		t.Fatal(err)
	}
	// float64 cannot tell 5 from 5.0; the integer beyond 2^53 has lost
	// digits and prints as a float.
	if got, want := Str(plain), "{'big': 1.2345678901234567e+19, 'f': 5, 'h': 2.5, 'n': 5}"; got != want {
		t.Errorf("Str(float64 JSON) = %q, want %q", got, want)
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var exact any
	if err := dec.Decode(&exact); err != nil {
		t.Fatal(err)
	}
	want := "{'big': 12345678901234567890, 'f': 5.0, 'h': 2.5, 'n': 5}"
	if got := Str(exact); got != want {
		t.Errorf("Str(UseNumber JSON) = %q, want %q", got, want)
	}
	if got := Str(json.RawMessage(doc)); got != want {
		t.Errorf("Str(RawMessage) = %q, want %q", got, want)
	}
}

func TestIsSpaceAndStrip(t *testing.T) {
	in := "\t\n\v\f\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x y\u200b"
	if got, want := Strip(in), "x y\u200b"; got != want {
		t.Errorf("Strip = %q, want %q", got, want)
	}
	for s, want := range map[string]string{
		"":                    "",
		" \t\n\r\v\f":         "",
		"\x1c\x1d\x1e\x1f":    "",
		"\u0085\u00a0\u3000":  "",
		"\u200b":              "\u200b", // zero-width space is not whitespace in Python
		" x ":                 "x",
		"\u2028\u2029\u202f ": "",
	} {
		if got := Strip(s); got != want {
			t.Errorf("Strip(%q) = %q, want %q", s, got, want)
		}
	}
	// Python's str.isspace() is Unicode White_Space plus U+001C..U+001F;
	// White_Space has had no additions since before Unicode 14.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := IsSpace(r), unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f); got != want {
			t.Errorf("IsSpace(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	cases := map[string]bool{
		"x": true, "_": true, "_x1": true, "café": true, "Ⅻ": true, "x·y": true, "x\u0e33": true,
		"": false, "1x": false, "a b": false, "a-b": false, "a.b": false, "a:b": false,
		"\u0e33": false, "\u309b": false, "x\xff": false, "x\ufffd": false,
		"x\u0cf3": false, // Unicode 15.0: unassigned in Python 3.11
	}
	for in, want := range cases {
		if got := IsIdentifier(in); got != want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestUnicodeVersion guards the Unicode 14.0 emulation in unicode.go, which
// assumes Go's tables are at 15.0.
func TestUnicodeVersion(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Errorf("unicode.Version = %s: update unicode15Additions and the XID exclusions for Python 3.11", unicode.Version)
	}
}

func BenchmarkStr(b *testing.B) {
	v := map[string]any{
		"query": "weather in Paris", "limit": 10.0, "score": 0.75,
		"results": []any{map[string]any{"city": "Paris", "temp": 21.5, "ok": true, "tags": []any{"a", "b"}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		Str(v)
	}
}

func TestReprOrdered(t *testing.T) {
	// Python: repr({'zeta': 'z', 'alpha': ['a', {'y': None, 'x': 1}]})
	v := map[string]any{"alpha": []any{"a", map[string]any{"x": 1.0, "y": nil}}, "zeta": "z"}
	hint := json.RawMessage(`{"zeta":0,"alpha":[0,{"y":0,"x":0}]}`)
	if got, want := ReprOrdered(v, hint), `{'zeta': 'z', 'alpha': ['a', {'y': None, 'x': 1}]}`; got != want {
		t.Errorf("ReprOrdered = %s, want %s", got, want)
	}
	if got := ReprOrdered("s", nil); got != "'s'" {
		t.Errorf("ReprOrdered(string) = %s, want 's'", got)
	}
}

func TestStrOrdered(t *testing.T) {
	// Python: str({'zeta': {'y': 1, 'x': [{'q': None, 'p': True}]}, 'alpha': 'a'})
	v := map[string]any{"alpha": "a", "zeta": map[string]any{"x": []any{map[string]any{"p": true, "q": nil}}, "y": 1.0}}
	hint := json.RawMessage(`{"zeta":{"y":0,"x":[{"q":0,"p":0}]},"alpha":0}`)
	if got, want := StrOrdered(v, hint), `{'zeta': {'y': 1, 'x': [{'q': None, 'p': True}]}, 'alpha': 'a'}`; got != want {
		t.Errorf("StrOrdered = %s, want %s", got, want)
	}
	// google-adk sorts the top level of call args only.
	if got, want := StrArgs(v, hint), `{'alpha': 'a', 'zeta': {'y': 1, 'x': [{'q': None, 'p': True}]}}`; got != want {
		t.Errorf("StrArgs = %s, want %s", got, want)
	}
	// A key added since the hint: that dict falls back to sorted order,
	// its nested dicts keep theirs.
	v["beta"] = 2.0
	if got, want := StrOrdered(v, hint), `{'alpha': 'a', 'beta': 2, 'zeta': {'y': 1, 'x': [{'q': None, 'p': True}]}}`; got != want {
		t.Errorf("StrOrdered after a change = %s, want %s", got, want)
	}
	if got := StrOrdered(v, nil); got != Str(v) {
		t.Errorf("StrOrdered(nil hint) = %s, want %s", got, Str(v))
	}
	if got := StrArgs(nil, hint); got != "None" {
		t.Errorf("StrArgs(nil) = %s", got)
	}
	if got := StrOrdered("text", hint); got != "text" {
		t.Errorf("StrOrdered(string) = %s", got)
	}
}

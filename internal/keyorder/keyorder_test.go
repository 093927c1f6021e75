package keyorder

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestHint(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1, "b": {"x": [1, 2], "y": "s"}}`, ``}, // sorted everywhere: no hint
		{`{"b": 1, "a": 2}`, `{"b":0,"a":0}`},
		{`{"a": {"z": "long text", "y": null}, "b": [true, {"k": 1}]}`, `{"a":{"z":0,"y":0},"b":0}`},
		{`[{"q": 1, "p": 2}, 3, {"r": 0}]`, `[{"q":0,"p":0},0,0]`},
		{`{"é": 1, "a\"b\u0001": {"n": 1, "m": 2}}`, `{"é":0,"a\"b\u0001":{"n":0,"m":0}}`},
		{`"just a string"`, ``},
		{`12.5`, ``},
		{`{"b": 1, "a": 2, "b": 3}`, ``}, // duplicate keys: no order
		{`{"b": 1, "a": `, ``},           // malformed
		{`{"b": 1, "a": 2} x`, ``},
		{`{"b": tru, "a": 2}`, ``},
	} {
		if got := string(Of([]byte(tc.in))); got != tc.want {
			t.Errorf("Of(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDuplicateKeysAmongManyUnsorted(t *testing.T) {
	// More than 16 keys, out of order, with one repeated far apart.
	in := `{"z":0,"y":0,"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"y":1}`
	if h := Of([]byte(in)); h != nil {
		t.Fatalf("Of(duplicate keys) = %s, want no hint", h)
	}
}

func TestOrder(t *testing.T) {
	tr := Parse([]byte(`{"b":0,"a":{"y":0,"x":0}}`))
	m := map[string]any{"a": map[string]any{"x": 1, "y": 2}, "b": 3}
	keys, fields := tr.Order(m)
	if !reflect.DeepEqual(keys, []string{"b", "a"}) || fields[0] != nil {
		t.Fatalf("Order = %v %v", keys, fields)
	}
	sub, _ := fields[1].Order(m["a"].(map[string]any))
	if !reflect.DeepEqual(sub, []string{"y", "x"}) {
		t.Fatalf("nested Order = %v", sub)
	}
	// A key added or removed since: no order there, nested hints still found.
	m["c"] = 1
	if k, _ := tr.Order(m); k != nil {
		t.Fatalf("Order with an extra key = %v, want nil", k)
	}
	if tr.Field("a") == nil || tr.Field("b") != nil || tr.Field("zz") != nil {
		t.Fatal("Field")
	}
	var nilTree *Tree
	if k, _ := nilTree.Order(m); k != nil || nilTree.Field("a") != nil || nilTree.Item(0) != nil {
		t.Fatal("nil tree")
	}
}

func TestMarshal(t *testing.T) {
	v := map[string]any{"a": map[string]any{"x": 1, "y": "<&>"}, "b": []any{map[string]any{"q": true, "p": nil}}, "c": 2.5}
	hint := json.RawMessage(`{"c":0,"b":[{"q":0,"p":0}],"a":{"y":0,"x":0}}`)
	got, err := Marshal(v, hint)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"c":2.5,"b":[{"q":true,"p":null}],"a":{"y":"\u003c\u0026\u003e","x":1}}`
	if string(got) != want {
		t.Fatalf("Marshal = %s, want %s", got, want)
	}
	// A changed key set falls back to sorted at that level only.
	delete(v, "c")
	got, _ = Marshal(v, hint)
	if want := `{"a":{"y":"\u003c\u0026\u003e","x":1},"b":[{"q":true,"p":null}]}`; string(got) != want {
		t.Fatalf("Marshal after a change = %s, want %s", got, want)
	}
	plain, _ := Marshal(v, nil)
	std, _ := json.Marshal(v)
	if string(plain) != string(std) {
		t.Fatalf("Marshal without hint = %s, want %s", plain, std)
	}
}

func TestDecode(t *testing.T) {
	v, hint, err := Decode([]byte(`{"n": 21, "f": 0.5, "l": [{"b": 1, "a": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["n"] != int64(21) || m["f"] != 0.5 {
		t.Fatalf("numbers: %#v", m)
	}
	if string(hint) != `{"n":0,"f":0,"l":[{"b":0,"a":0}]}` {
		t.Fatalf("hint = %s", hint)
	}
	if _, _, err := Decode([]byte(`{} {}`)); err == nil {
		t.Fatal("trailing data accepted")
	}
	if Wrap("result", nil) != nil || string(Wrap("result", hint)) != `{"result":`+string(hint)+`}` {
		t.Fatal("Wrap")
	}
	if string(Sub(Wrap("result", hint), "result")) != string(hint) {
		t.Fatal("Sub")
	}
}

func TestMemberAndElements(t *testing.T) {
	doc := []byte(` {"a": [1, {"x": "}\"]"}, []], "b\u0061": {"k": true} , "c": null}`)
	if got := string(Member(doc, "a")); got != `[1, {"x": "}\"]"}, []]` {
		t.Errorf("Member a = %s", got)
	}
	if got := string(Member(doc, "ba")); got != `{"k": true}` {
		t.Errorf("Member ba (escaped key) = %s", got)
	}
	if Member(doc, "zz") != nil || Member([]byte(`[1]`), "a") != nil || Member([]byte(`{"a": `), "a") != nil {
		t.Error("Member found what is not there")
	}
	els := Elements(Member(doc, "a"))
	if len(els) != 3 || string(els[1]) != `{"x": "}\"]"}` || string(els[2]) != `[]` {
		t.Errorf("Elements = %q", els)
	}
	if Elements([]byte(`{}`)) != nil || len(Elements([]byte(` [ ] `))) != 0 {
		t.Error("Elements of a non-list or an empty list")
	}
}

// FuzzIsNumber: isNumber agrees with encoding/json on what a number is.
func FuzzIsNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "-12.5e+3", "01", "1.", ".5", "1e", "-", "+1", "1E-0", "0.0e0", "2e300", "1x", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if bytes.ContainsAny(s, " \t\n\r") {
			return // the parser cuts literals at whitespace
		}
		want := len(s) > 0 && json.Valid(s) && (s[0] == '-' || '0' <= s[0] && s[0] <= '9')
		if got := isNumber(s); got != want {
			t.Fatalf("isNumber(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}

// FuzzOf checks Of, which writes the hint in one pass, against the hint
// of the parsed Tree.
func FuzzOf(f *testing.F) {
	for _, s := range []string{
		`{"b": 1, "a": 2}`, `[{"q": 1, "p": 2}, 3, {"r": 0}]`, `{"é": 1, "a\"b\u0001": {"n": 1, "m": 2}}`,
		`{"b": 1, "a": 2, "b": 3}`, `{"a": {"b": 1, "a": 2, "b": 3}, "0": [{}, []]}`, `{"k\u00e9": {"y": "\n\t\"", "x": -1.5e3}}`,
		`{"z":0,"y":0,"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"y":1}`,
		`{"a\ud800": {"b": 1, "a": 2}}`, `{"b": "\x"}`, "{\"\xff\": {\"b\": 1, \"a\": 2}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := Of(raw), Parse(raw).Hint()
		if !bytes.Equal(got, want) {
			t.Fatalf("Of(%q) = %q, Parse().Hint() = %q", raw, got, want)
		}
	})
}

func BenchmarkOf(b *testing.B) {
	raw := []byte(`{"city":"Paris","days":[{"summary":"sunny","highC":21},{"summary":"sunny","highC":22},{"summary":"sunny","highC":23}]}`)
	b.Run("onepass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Of(raw)
		}
	})
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse(raw).Hint()
		}
	})
}

// FuzzAppendJSON checks AppendJSON without a hint against json.Marshal:
// the same bytes, or an error from both. Integers are given as int64 and
// int, as Go tools return them.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{
		`{"b": [1, 2.5, -0, 1e21, 1e-7, "<&>\u2028\n\u0001\"\\", null, true], "a": {"é": "\ud800"}}`,
		`[9007199254740993, -1.5e-300, "x"]`, `"plain"`,
	} {
		f.Add([]byte(s))
	}
	var ints func(v any, small bool) any
	ints = func(v any, small bool) any {
		switch x := v.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				if small && i == int64(int(i)) {
					return int(i)
				}
				return i
			}
			fl, _ := x.Float64()
			return fl
		case map[string]any:
			for k, e := range x {
				x[k] = ints(e, !small)
			}
		case []any:
			for i, e := range x {
				x[i] = ints(e, !small)
			}
		}
		return v
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		v = ints(v, false)
		got, err := AppendJSON(nil, v, nil)
		want, werr := json.Marshal(v)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON = %s, %v; json.Marshal = %s, %v", got, err, want, werr)
		}
	})
}

// FuzzAppendJSONString checks AppendJSONString against json.Marshal of the
// same string, invalid UTF-8 and every escape included, after a prefix
// (appending must not disturb what b holds).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>\u2028\u2029\n\t\x01\x1f\x7f\"\\", "é\xff\xc3", "a\xe2\x80", strings.Repeat("x", 70) + "\"" + strings.Repeat("é", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendJSONString([]byte("pre"), s)
		if !bytes.Equal(got[3:], want) || string(got[:3]) != "pre" {
			t.Fatalf("AppendJSONString(%q) = %s, json.Marshal = %s", s, got, want)
		}
	})
}

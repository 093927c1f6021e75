package abi

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// fastCases are inputs on the edges of what the fast path takes: each must
// decode as the strict path decodes it, or be left to it.
var fastCases = []string{
	`{"abiVersion":1,"result":{"temp":21.5,"unit":"C","days":[{"highC":21},{"highC":22.0}]}}`,
	// Arrays past the 8 elements gathered on the stack, nested; repeated
	// short strings (shared), more distinct ones than are kept, a long one,
	// escaped ones equal to a kept one, a value equal to a key.
	`{"abiVersion":1,"result":[1,2,3,4,5,6,7,8,9,10,[[],[1],[1,2,3,4,5,6,7,8,9]],"a","a","b","c","d","e","f","g","h","i","a","i","\u0061","a\"","a\"","` + strings.Repeat("x", 40) + `","` + strings.Repeat("x", 40) + `",{"a":"a"}]}`,
	`{"abiVersion":1,"result":"plain"}`, `{"abiVersion":1,"error":"no such city"}`, `{"abiVersion":1}`,
	` { "abiVersion" : 1 , "result" : [ 1 , -0 , 0.5 , 1e2 , -1E-2 , 9223372036854775807 , 9223372036854775808 , -9223372036854775808 , 123456789012345678 , 1e400 , -1e400 ] } `,
	`{"abiVersion":1,"result":{"a":true,"b":false,"c":null,"d":{},"e":[],"f":""}}`,
	`{"abiVersion":1,"result":"\" \\ \/ \b \f \n \r \t \u00e9 \u2028 \ud83d\ude00 é 😀"}`,
	`{"abiVersion":1,"result":"\ud83d"}`, `{"abiVersion":1,"result":"\ude00\ud83d"}`, `{"abiVersion":1,"result":"\ud83d\u0041"}`,
	`{"abiVersion":1,"result":"\ud83dx"}`, `{"abiVersion":1,"result":"\u12"}`, `{"abiVersion":1,"result":"\x"}`,
	"{\"abiVersion\":1,\"result\":\"\xff\"}", "{\"abiVersion\":1,\"result\":\"a\xc3\"}", "{\"abiVersion\":1,\"result\":\"\x01\"}",
	"{\"abiVersion\":1,\"result\":\"\\u00e9\xff\"}", "{\"abiVersion\":1,\"result\":\"\xed\xa0\x80\"}",
	`{"abiVersion":1,"result":{"k":1,"k":2}}`, `{"abiVersion":1,"result":1,"result":null}`, `{"abiVersion":1,"abiVersion":null}`,
	`{"abiVersion":1,"error":null}`, `{"abiVersion":1,"error":1}`, `{"abiVersion":"1"}`, `{"abiVersion":1.0}`, `{"abiVersion":1e0}`,
	`{"abiVersion":99999999999999999999}`, `{"abiVersion":-0}`, `{"ABIVERSION":1}`, `{"Result":1,"abiVersion":1}`,
	`{"abiVers\u0069on":1}`, `{"abiVersion":1,"nope":1}`, `{"abiVersion":1,}`, `{,}`, `{"abiVersion":1 "result":2}`,
	`{"abiVersion":1}x`, `{"abiVersion":1}{}`, `{"abiVersion":1}]`, ``, ` `, `null`, `[]`, `{}`, `"x"`, `12`, `12x`, `-`, `-01`, `01`, `1.`, `.5`, `1e`, `1e+`,
	`tru`, `nul`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":}`, `{1:2}`, "\ufeff{}", `{"abiVersion":1,"result":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`,
	`{"abiVersion":1,"result":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat("}", 999) + `}`,
	"\t\n\r {\"abiVersion\":1}\t\n\r ", `{"abiVersion":1,"result":"` + strings.Repeat("é", 100) + `\n"}`,
}

// checkFast decodes data both ways into fresh values and fails if the fast
// path succeeds where the strict path fails, or with another value.
func checkFast(t *testing.T, data []byte) {
	t.Helper()
	var fa, sa any
	if decodeFast(data, &fa) {
		if err := decodeStrict(data, &sa); err != nil {
			t.Fatalf("fast path took %q, strict path refused it: %v", data, err)
		}
		if !sameValue(fa, sa) {
			t.Fatalf("%q: fast path %#v, strict path %#v", data, fa, sa)
		}
	} else if fa != nil {
		t.Fatalf("fast path gave up on %q but set the value to %#v", data, fa)
	}
	var fo, so ToolCallOutput
	if decodeFast(data, &fo) {
		if err := decodeStrict(data, &so); err != nil {
			t.Fatalf("fast path took %q, strict path refused it: %v", data, err)
		}
		if !sameValue(fo, so) {
			t.Fatalf("%q: fast path %#v, strict path %#v", data, fo, so)
		}
	} else if !reflect.DeepEqual(fo, ToolCallOutput{}) {
		t.Fatalf("fast path gave up on %q but set the output to %#v", data, fo)
	}
}

// sameValue is reflect.DeepEqual with NaN equal to itself (no JSON number
// decodes to NaN; this keeps a failure readable if one ever did).
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb)) && math.Signbit(fa) == math.Signbit(fb)
	}
	return reflect.DeepEqual(a, b)
}

func TestFastDecodeAgrees(t *testing.T) {
	for _, c := range fastCases {
		checkFast(t, []byte(c))
	}
}

// TestFastDecodeTakes makes sure the fast path is taken where it should be,
// so the benchmarks measure it and a change that makes it give up on
// ordinary outputs fails.
func TestFastDecodeTakes(t *testing.T) {
	for _, c := range []string{
		`{"abiVersion":1,"result":{"city":"Paris","days":[{"summary":"sunny","highC":21},{"summary":"sunny","highC":22.5}]}}`,
		`{"abiVersion":1,"error":"at most 3 days, not 4"}`,
		`{"abiVersion":1,"result":"caf\u00e9 \"quoted\" 😀"}`,
	} {
		var o ToolCallOutput
		if !decodeFast([]byte(c), &o) {
			t.Errorf("fast path gave up on %s", c)
		}
	}
	// The result's text, kept for the order of its keys, as on the strict
	// path.
	var kept ToolCallOutput
	if !decodeFast([]byte(`{"abiVersion":1,"result": {"b":1,"a":[2]} ,"error":""}`), &kept) || string(kept.ResultJSON()) != `{"b":1,"a":[2]}` {
		t.Errorf("fast path kept result text %q", kept.ResultJSON())
	}
	var v any
	if !decodeFast([]byte(`"Paris"`), &v) || v != "Paris" {
		t.Errorf("fast path on a state value: %#v", v)
	}
	var o ToolCallOutput
	if err := Decode([]byte(`{"abiVersion":1,"result":{"n":21,"x":21.0,"big":12345678901234567890}}`), &o, 0); err != nil {
		t.Fatal(err)
	}
	m := o.Result.(map[string]any)
	if m["n"] != int64(21) || m["x"] != 21.0 || m["big"] != 12345678901234567890.0 {
		t.Errorf("numbers: %#v", m)
	}
}

// TestFastDecodeErrors checks that outputs the fast path gives up on fail
// with the strict path's errors.
func TestFastDecodeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"abiVersion":1,"nope":1}`, `abi: malformed message: json: unknown field "nope"`},
		{`{"abiVersion":1}x`, `abi: malformed message: data after the JSON value at offset 16`},
		{``, `abi: malformed message: empty`},
		{`{"abiVersion":1.5}`, `abi: malformed message: json: cannot unmarshal number 1.5 into Go struct field ToolCallOutput.Header.abiVersion of type int`},
		{`{"abiVersion":1,"error":2}`, `abi: malformed message: json: cannot unmarshal number into Go struct field ToolCallOutput.error of type string`},
		{`{"result":1}`, `abi: unsupported abiVersion: abiVersion is missing, want 1`},
		{`{"abiVersion":2}`, `abi: unsupported abiVersion: abiVersion is 2, want 1`},
	} {
		var o ToolCallOutput
		err := Decode([]byte(c.in), &o, 0)
		if err == nil || err.Error() != c.want {
			t.Errorf("Decode(%s) = %v, want %s", c.in, err, c.want)
		}
	}
	var o ToolCallOutput
	if err := Decode([]byte(`{"abiVersion":1}`), &o, 10); err == nil || err.Error() != "abi: message too large: 16 bytes, limit 10" {
		t.Errorf("size limit: %v", err)
	}
}

// FuzzFastDecode is the differential fuzz of the fast path against the
// strict one: `go test -fuzz=FuzzFastDecode ./abi`.
func FuzzFastDecode(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}

func BenchmarkDecodeToolOutput(b *testing.B) {
	data := []byte(`{"abiVersion":1,"result":{"city":"Paris","days":[{"summary":"sunny","highC":21},{"summary":"sunny","highC":22},{"summary":"sunny","highC":23}]}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var o ToolCallOutput
			if err := Decode(data, &o, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var o ToolCallOutput
			if err := decodeStrict(data, &o); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeStateValue is what the host does with each state_set of
// a guest: decode the value into an untyped value.
func BenchmarkDecodeStateValue(b *testing.B) {
	data := []byte(`"Paris"`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := DecodeValue(data, &v, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := decodeStrict(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFastDecodeFloatAllocs: a number with a fraction or an exponent costs
// the fast path one allocation, its box in the any, as an integer past the
// small ones does. Asking strconv.ParseInt first cost a *NumError and two
// strings more per number, and Rust and Python guests write every float
// result so (21.0).
func TestFastDecodeFloatAllocs(t *testing.T) {
	allocs := func(data string) float64 {
		b := []byte(data)
		return testing.AllocsPerRun(200, func() {
			var o ToolCallOutput
			if !decodeFast(b, &o) {
				t.Fatalf("fast path refused %s", data)
			}
		})
	}
	ints := allocs(`{"abiVersion":1,"result":[1001,1002,1003,1004,1005,1006]}`)
	floats := allocs(`{"abiVersion":1,"result":[21.0,22.5,2e3,1E-2,-0.5,123456789.125]}`)
	if floats > ints {
		t.Errorf("6 floats cost %.0f allocations, 6 integers %.0f: want no more", floats, ints)
	}
}

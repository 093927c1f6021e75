package adkhost

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

// scalars has a field of every kind the argument decoder covers.
type scalars struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	Tag string  // no tag: the Go name
	Celsius
	hidden string
}

// Celsius is a named number type; embedding it keeps scalars off the plan,
// so the decoder tests use scalarArgs below.
type Celsius float64

type scalarArgs struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	C   Celsius `json:"c"`
	Tag string
	Out string `json:"-"`
	low string
}

// checkDecode decodes raw with the plan and with encoding/json and fails
// unless both give the same value and the same error; it returns whether
// the plan took the input itself.
func checkDecode(t *testing.T, dec *argsDecoder, raw string) bool {
	t.Helper()
	var want scalarArgs
	wantErr := json.Unmarshal([]byte(raw), &want)
	var got scalarArgs
	gotErr := decodeArgs(dec, &inputStrings{data: []byte(raw)}, []byte(raw), &got)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Errorf("%s: error %v, encoding/json %v", raw, gotErr, wantErr)
	}
	if got != want {
		t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
	}
	var fast scalarArgs
	set, ok := dec.decode(&inputStrings{data: []byte(raw)}, []byte(raw), unsafe.Pointer(&fast))
	if ok {
		// set is what the required check reads: the fields present with a
		// value other than null, as missingRequired finds them.
		for i, f := range dec.fields {
			missing, mok := missingRequired([]byte(raw), []string{f.name})
			if want := mok && missing == ""; want != (set&(1<<i) != 0) {
				t.Errorf("%s: field %s set %v, missingRequired says present %v (ok %v)", raw, f.name, !want, want, mok)
			}
		}
	}
	return ok
}

func TestArgsDecoderAgreesWithEncodingJSON(t *testing.T) {
	dec := newArgsDecoder(reflect.TypeFor[scalarArgs]())
	if dec == nil {
		t.Fatal("no plan for a struct of scalars")
	}
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{"s":"Paris","b":true,"i":-3,"i8":-128,"i16":32767,"i32":-2147483648,"i64":9223372036854775807,"u":7,"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"f32":1.5,"f64":-2.5e-7,"c":21.5,"Tag":"x"}`, true},
		{`{}`, true},
		{` { "s" : "a" , "i" : 0 } `, true},
		{`{"s":null,"i":null,"b":null}`, true},
		{`{"s":"a","s":"b"}`, true}, // the last wins
		{`{"s":"Zürich ☀"}`, true},
		{`{"i":-0,"f64":0.0,"f32":1E3}`, true},
		{`{"s":"a\"b"}`, false},          // escape
		{`{"s":"a\u00e9"}`, false},       // escape
		{`{"s":"\xff"}`, false},          // invalid UTF-8, replaced by encoding/json
		{`{"S":"upper"}`, false},         // case-insensitive match
		{`{"tag":"x"}`, false},           // case-insensitive match of the Go name
		{`{"Out":"x"}`, false},           // "-": unknown
		{`{"low":"x"}`, false},           // unexported: unknown
		{`{"extra":[1,{"a":2}]}`, false}, // unknown
		{`{"extra":tru}`, false},         // unknown and invalid
		{`{"i":1.0}`, false},
		{`{"i":1e2}`, false},
		{`{"i8":128}`, false},
		{`{"u8":-1}`, false},
		{`{"u":-0}`, false},
		{`{"i":01}`, false},
		{`{"i":+1}`, false},
		{`{"i":"1"}`, false},
		{`{"s":1}`, false},
		{`{"s":0"}`, false}, // a number that ends in a quote is no string
		{`{"b":"true"}`, false},
		{`{"b":1}`, false},
		{`{"f32":1e39}`, false},
		{`{"f64":1e400}`, false},
		{`{"f64":.5}`, false},
		{`{"f64":1.}`, false},
		{`{"f64":-}`, false},
		{`{"i":1,}`, false},
		{`{"i":1`, false},
		{`{"i":1}x`, false},
		{`[1]`, false},
		{`"s"`, false},
		{`{"s":["a"]}`, false},
		{`{"s":{"a":1}}`, false},
	} {
		if fast := checkDecode(t, dec, tc.raw); fast != tc.fast {
			t.Errorf("%s: the plan took it: %v, want %v", tc.raw, fast, tc.fast)
		}
	}
}

func FuzzArgsDecoder(f *testing.F) {
	for _, s := range []string{`{"s":"a","i":1,"f64":2.5,"b":true}`, `{"u8":255}`, `{"S":"x"}`, `{"f32":1e-7}`, `{}`} {
		f.Add(s)
	}
	dec := newArgsDecoder(reflect.TypeFor[scalarArgs]())
	f.Fuzz(func(t *testing.T, raw string) { checkDecode(t, dec, raw) })
}

func TestArgsDecoderCoversOnlyPlainStructs(t *testing.T) {
	type textArg struct {
		T time.Time `json:"t"` // a TextUnmarshaler
	}
	type stringOpt struct {
		N int `json:"n,string"`
	}
	type nested struct {
		P struct{ A int } `json:"p"`
	}
	type ptr struct {
		S *string `json:"s"`
	}
	type clash struct {
		A string `json:"name"`
		B string `json:"Name"`
	}
	type unicodeName struct {
		A string `json:"città"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[scalars](), // embedded field
		reflect.TypeFor[textArg](),
		reflect.TypeFor[stringOpt](),
		reflect.TypeFor[nested](),
		reflect.TypeFor[ptr](),
		reflect.TypeFor[clash](),
		reflect.TypeFor[unicodeName](),
		reflect.TypeFor[map[string]any](),
		reflect.TypeFor[*scalarArgs](),
		reflect.TypeFor[any](),
	} {
		if newArgsDecoder(typ) != nil {
			t.Errorf("%v has a decoder plan", typ)
		}
	}
}

// Result types for the encoder tests.
type day struct {
	Summary string  `json:"summary"`
	HighC   float64 `json:"highC"`
	Low     float32 `json:"low,omitempty"`
}

type forecast struct {
	City  string   `json:"city"`
	Days  []day    `json:"days"`
	Ptrs  []*day   `json:"ptrs,omitempty"`
	Next  *day     `json:"next"`
	Tags  []string `json:"tags,omitempty"`
	Count uint16   `json:"count,omitempty"`
	OK    bool     `json:"ok"`
	Temp  Celsius  `json:"temp"`
	Note  string
	Skip  string    `json:"-"`
	Grid  [][]int64 `json:"grid,omitempty"`
	Ptr   *int      `json:"ptr,omitempty"`
	low   int
}

func checkEncode[R any](t *testing.T, v R) bool {
	t.Helper()
	enc := newEncoder(reflect.TypeFor[R]())
	if enc == nil {
		t.Fatalf("%T has no encoder plan", v)
	}
	want, wantErr := json.Marshal(v)
	// Appended after other bytes, as the output envelope does.
	got, gotErr := appendResult(enc, []byte("{"), &v)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Errorf("%#v: error %v, encoding/json %v", v, gotErr, wantErr)
	}
	if gotErr == nil && (len(got) == 0 || got[0] != '{') {
		t.Errorf("%#v: appendResult lost what it appended to: %s", v, got)
	}
	if len(got) > 0 {
		got = got[1:]
	}
	if string(got) != string(want) {
		t.Errorf("%#v:\n got %s\nwant %s", v, got, want)
	}
	_, fast := enc(nil, unsafe.Pointer(&v))
	return fast
}

func TestEncoderAgreesWithEncodingJSON(t *testing.T) {
	seven := 7
	full := &forecast{
		City: "Zürich <&> \"q\" \\ \n\t\x01 \u2028\u2029 \xff end",
		Days: []day{{"sunny", 21, 0}, {"rain", -0.000001, 3.25}, {"", 1e21, 1e-7}, {"x", 123456789.125, float32(math.MaxFloat32)}},
		Ptrs: []*day{nil, {Summary: "p"}},
		Next: &day{Summary: "next", HighC: 5e-324},
		Tags: []string{}, Count: 3, OK: true, Temp: -40, Note: "n",
		Grid: [][]int64{{1, -2}, nil, {}}, Ptr: &seven, low: 1,
	}
	for _, v := range []*forecast{full, {}, nil, {Days: []day{}}, {Days: []day{{HighC: 1e20}, {HighC: 1e-6}, {HighC: -1e21}}}} {
		if !checkEncode(t, v) {
			t.Errorf("%+v: the plan did not take it", v)
		}
	}
	// NaN and infinity: encoding/json fails, and so does the result.
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if checkEncode(t, forecast{Days: []day{{HighC: f}}}) {
			t.Errorf("%v: the plan took it", f)
		}
	}
	checkEncode(t, "plain string")
	checkEncode(t, 42)
	checkEncode(t, []float32{0.1, 1e-7, 3e38})
	checkEncode(t, uintptr(9))
}

func FuzzEncodeString(f *testing.F) {
	for _, s := range []string{"", "a", "<&>", "\u2028", "\xff\xfe", "é\x00\x1f\"\\", "abcdefgh<ijklmnop", "abcdefghijklmnopq\u2029"} {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		checkEncode(t, day{Summary: s, HighC: x, Low: float32(x)})
		checkEncode(t, s)
	})
}

// appendJSONString checks eight bytes at a time: every byte json.Marshal
// escapes, at every position of a string longer than two words.
func TestAppendJSONStringEachPosition(t *testing.T) {
	for _, c := range []string{"\"", "\\", "\x00", "\x1f", "<", ">", "&", "\x7f", "\x80", "\xff", "é", "\u2028", " "} {
		for pos := 0; pos < 26; pos++ {
			s := "abcdefghijklmnopqrstuvwxyz"[:pos] + c + "abcdefghijklmnopqrstuvwxyz"[pos:]
			want, _ := json.Marshal(s)
			if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
				t.Errorf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
			}
		}
	}
}

func TestEncoderCoversOnlyPlainTypes(t *testing.T) {
	type recursive struct {
		Next *recursive `json:"next"`
	}
	type withMap struct {
		M map[string]int `json:"m"`
	}
	type withAny struct {
		A any `json:"a"`
	}
	type omitZero struct {
		N int `json:"n,omitzero"`
	}
	type withTime struct {
		T time.Time `json:"t"`
	}
	type withBytes struct {
		B []byte `json:"b"`
	}
	type withArray struct {
		A [2]int `json:"a"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[recursive](),
		reflect.TypeFor[withMap](),
		reflect.TypeFor[withAny](),
		reflect.TypeFor[omitZero](),
		reflect.TypeFor[withTime](),
		reflect.TypeFor[withBytes](),
		reflect.TypeFor[withArray](),
		reflect.TypeFor[scalars](), // embedded
		reflect.TypeFor[json.RawMessage](),
		reflect.TypeFor[map[string]any](),
		reflect.TypeFor[any](),
	} {
		if newEncoder(typ) != nil {
			t.Errorf("%v has an encoder plan", typ)
		}
	}
}

// A tool with plain types gives the same function response as one whose
// types keep it on encoding/json.
func TestToolPlansMatchEncodingJSON(t *testing.T) {
	type out struct {
		Echo  string  `json:"echo"`
		Twice float64 `json:"twice"`
	}
	type args struct {
		S   string  `json:"s,omitempty"`
		F64 float64 `json:"f64,omitempty"`
	}
	plain, err := newTool("plain", "", func(_ ToolContext, a args) (*out, error) {
		return &out{Echo: a.S, Twice: 2 * a.F64}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	generic, err := newTool("generic", "", func(_ ToolContext, a map[string]any) (any, error) {
		s, _ := a["s"].(string)
		f, _ := a["f64"].(float64)
		return &out{Echo: s, Twice: 2 * f}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{`{"s":"<b>","f64":1.25}`, `{"s":"a\u00e9","f64":1e300}`, `null`, ``} {
		a, aerr := plain.run(ToolContext{}, inputStrings{data: []byte(raw)}, json.RawMessage(raw), nil)
		b, berr := generic.run(ToolContext{}, inputStrings{data: []byte(raw)}, json.RawMessage(raw), nil)
		if string(a) != string(b) || (aerr == nil) != (berr == nil) {
			t.Errorf("%s: plain %s %v, generic %s %v", raw, a, aerr, b, berr)
		}
	}
	if _, err := plain.run(ToolContext{}, inputStrings{}, json.RawMessage(`{"f64":1e308}`), nil); err == nil || !strings.Contains(err.Error(), "unsupported value") {
		t.Errorf("an infinite result: %v, want encoding/json's error", err)
	}
}

func TestErrorOutputMatchesABIEncode(t *testing.T) {
	for _, msg := range []string{"", "failed", `adkhost: module m has no tool "<x>"`, "\xff\u2028\n"} {
		o := &errorOutput{Error: msg}
		want, err := abi.Encode(&errorOutput{Error: msg})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.appendJSON(nil); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", msg, got, want)
		}
	}
}

// checkInteger compares parseInt and parseUint with strconv for a JSON
// number, at every size.
func checkInteger(t *testing.T, v string) {
	if !jsonNumber([]byte(v)) {
		return
	}
	for _, bits := range []int{8, 16, 32, 64} {
		n, ok := parseInt([]byte(v), bits)
		wn, err := strconv.ParseInt(v, 10, bits)
		if ok != (err == nil) || ok && n != wn {
			t.Errorf("parseInt(%s, %d) = %d, %v; strconv %d, %v", v, bits, n, ok, wn, err)
		}
		u, ok := parseUint([]byte(v), bits)
		wu, err := strconv.ParseUint(v, 10, bits)
		if ok != (err == nil) || ok && u != wu {
			t.Errorf("parseUint(%s, %d) = %d, %v; strconv %d, %v", v, bits, u, ok, wu, err)
		}
	}
}

func TestIntegers(t *testing.T) {
	for _, v := range []string{"0", "-0", "7", "-1", "127", "128", "-128", "-129", "255", "256", "32767", "65536", "-2147483649",
		"999999999999999999", "-999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1.5", "1e3", "-", "01"} {
		checkInteger(t, v)
	}
	for _, n := range []int64{0, 1, -1, 9, 10, 99, 100, -100, 1e17 - 1, 1e18, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		if got, want := string(appendInt([]byte("x"), n)), "x"+strconv.FormatInt(n, 10); got != want {
			t.Errorf("appendInt(%d) = %s, want %s", n, got, want)
		}
	}
	for _, n := range []uint64{0, 9, 10, math.MaxUint64, math.MaxUint64 - 1, 1 << 63} {
		if got, want := string(appendUint(nil, n)), strconv.FormatUint(n, 10); got != want {
			t.Errorf("appendUint(%d) = %s, want %s", n, got, want)
		}
	}
}

func FuzzIntegers(f *testing.F) {
	f.Add("-128", int64(-129))
	f.Fuzz(func(t *testing.T, v string, n int64) {
		checkInteger(t, v)
		if got, want := string(appendInt(nil, n)), strconv.FormatInt(n, 10); got != want {
			t.Errorf("appendInt(%d) = %s, want %s", n, got, want)
		}
	})
}

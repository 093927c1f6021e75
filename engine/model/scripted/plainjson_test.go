package scripted

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
)

// asGo turns a decoded JSON value's numbers into what a Go tool returns:
// int64 for integers, float64 otherwise.
func asGo(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = asGo(e)
		}
	case []any:
		for i, e := range v {
			v[i] = asGo(e)
		}
	}
	return v
}

func checkPlain(t *testing.T, v any) {
	t.Helper()
	got, ok := plainJSON(v)
	var want any
	err := viaJSON(v, &want)
	if !ok {
		return // the caller takes viaJSON's answer
	}
	if err != nil {
		t.Fatalf("plainJSON(%#v) = %#v, but the JSON round trip fails: %v", v, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plainJSON(%#v) = %#v, the JSON round trip gives %#v", v, got, want)
	}
}

func TestPlainJSON(t *testing.T) {
	for _, v := range []any{
		nil, true, "x", "bad \xff", 1.5, math.Inf(1), math.NaN(), math.Copysign(0, -1), 3, int64(1) << 62, int64(9007199254740993),
		map[string]any{"a": []any{1, "b", nil, map[string]any{}}, "\xfe": 1}, map[string]any(nil), []any(nil),
		map[string]any{"city": "Paris", "days": []any{map[string]any{"highC": int64(21)}}},
		float32(0.1), map[string]string{"a": "b"}, struct{ A int }{1},
	} {
		checkPlain(t, v)
	}
	if _, ok := plainJSON(float32(0.1)); ok {
		t.Fatal("float32 taken as plain: its JSON is its 32-bit text")
	}
	if _, ok := plainJSON(math.NaN()); ok {
		t.Fatal("NaN taken as plain: encoding/json refuses it")
	}
}

func FuzzPlainJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x", null, true, {"b": -0}]}`, `[1e300, -9007199254740993, "\ud800"]`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		checkPlain(t, asGo(v))
	})
}

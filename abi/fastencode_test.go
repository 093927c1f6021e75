package abi

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// encodeBoth returns Encode's bytes and json.Marshal's of the same message.
func encodeBoth(t *testing.T, m *ToolCallInput) (fast, want []byte, fastErr, wantErr error) {
	t.Helper()
	m.ABIVersion = Version
	want, wantErr = json.Marshal(m)
	fast, fastErr = Encode(m)
	return fast, want, fastErr, wantErr
}

func checkSame(t *testing.T, m *ToolCallInput) {
	t.Helper()
	fast, want, fastErr, wantErr := encodeBoth(t, m)
	if (fastErr == nil) != (wantErr == nil) || fastErr != nil && fastErr.Error() != wantErr.Error() {
		t.Fatalf("errors differ: Encode %v, json.Marshal %v", fastErr, wantErr)
	}
	if !bytes.Equal(fast, want) {
		t.Fatalf("Encode and json.Marshal differ:\nEncode:       %s\njson.Marshal: %s", fast, want)
	}
}

func TestEncodeToolCallInputAsJSON(t *testing.T) {
	deep := map[string]any{}
	for d, i := deep, 0; i < 100; i++ {
		n := map[string]any{}
		d["k"] = []any{n}
		d = n
	}
	full := &Content{Role: "user", Parts: []*Part{
		{Text: "hi <b>&</b> \u2028\u2029 \x00\x1f\b\f\n\r\t \"\\ \xff\xfe é 😀"},
		{Thought: true},
		{Text: "t", Thought: true},
		{},
		nil,
		{InlineData: &Blob{MIMEType: "image/png", Data: []byte("hi")}},
		{FunctionCall: &FunctionCall{ID: "c1", Name: "get", Args: map[string]any{"q": "x"}}},
		{Thought: true, ThoughtSignature: []byte("sig")},
		{VideoMetadata: json.RawMessage(`{"fps":1}`)},
	}}
	for name, m := range map[string]*ToolCallInput{
		"empty": {},
		"bench": {
			Context: InvocationInfo{AppName: "weather_app", UserID: "user-42", SessionID: "s", InvocationID: "e-1", AgentName: "root", FunctionCallID: "c"},
			Tool:    "get_weather", Args: map[string]any{"city": "Paris", "days": int64(3)},
		},
		"full context": {Context: InvocationInfo{AppName: "a", Branch: "root.sub", FunctionCallID: "c1", UserContent: full}, Tool: "t", Args: map[string]any{}},
		"role only":    {Context: InvocationInfo{UserContent: &Content{Role: "user"}}},
		"parts only":   {Context: InvocationInfo{UserContent: &Content{Parts: []*Part{{Text: "x"}}}}},
		"empty parts":  {Context: InvocationInfo{UserContent: &Content{Parts: []*Part{}}}},
		"values": {Args: map[string]any{
			"s": "<&>", "t": true, "f": false, "n": nil, "i": int64(-1 << 63), "u": uint64(math.MaxUint64), "int": 7, "i32": int32(-5),
			"floats": []any{0.0, math.Copysign(0, -1), 1.5, 1e20, 1e21, 1e-6, 1e-7, 5e-324, math.MaxFloat64, -123456789.125, 1e-10},
			"nested": map[string]any{"b": []any{}, "a": map[string]any{}, "c": []any(nil), "d": map[string]any(nil)},
			"many":   map[string]any{"k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7, "k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "z": 0, "A": 0, "é": 0, "": 0},
		}},
		// Left to encoding/json: other Go types, and values it refuses.
		"typed":        {Args: map[string]any{"m": map[string]int{"b": 1, "a": 2}, "s": []string{"x"}, "n": json.Number("12"), "r": json.RawMessage(`{"z":1}`), "p": &Part{Text: "x"}}},
		"nan":          {Args: map[string]any{"x": math.NaN()}},
		"inf":          {Args: map[string]any{"x": []any{math.Inf(-1)}}},
		"deep":         {Args: deep},
		"confirmation": {Tool: "t", Args: map[string]any{}, Confirmation: &ToolConfirmation{Hint: "ok?", Confirmed: true, Payload: map[string]any{"n": 1}}},
		"nil args":     {Tool: "t"},
	} {
		t.Run(name, func(t *testing.T) { checkSame(t, m) })
	}
}

// FuzzEncodeToolCallInput checks Encode of a ToolCallInput against
// encoding/json, byte for byte: args from any JSON the fuzzer writes (as
// the host decodes arguments, integers as int64), strings with any bytes.
func FuzzEncodeToolCallInput(f *testing.F) {
	f.Add([]byte(`{"city":"Paris","days":3}`), "get_weather", "Paris <&>", 1.5)
	f.Add([]byte(`{"a":[1,2.5,-0,1e-7,1e21,null,true,{"b":"\u2028"}],"":{}}`), "\xff", "\u2029\x00", math.Inf(1))
	f.Add([]byte(`[]`), "", "", 0.0)
	f.Fuzz(func(t *testing.T, args []byte, s1, s2 string, x float64) {
		m := &ToolCallInput{
			Context: InvocationInfo{AppName: s1, UserID: s2, SessionID: s1 + s2, InvocationID: s2, AgentName: s1, Branch: s2, FunctionCallID: s1,
				UserContent: &Content{Role: s1, Parts: []*Part{{Text: s2}, {Text: s1, Thought: len(s2)%2 == 0}}}},
			Tool: s1,
		}
		var v any
		if DecodeValue(args, &v, 0) == nil {
			if a, ok := v.(map[string]any); ok {
				m.Args = a
			} else {
				m.Args = map[string]any{s1: v, s2: x}
			}
		}
		checkSame(t, m)
	})
}

package adkhost

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/adkhost/adkhost/abi"
)

// The hand-written tool_call decoder must agree with encoding/json on
// every input it accepts, and hand the others to it.
func TestFastToolCallInputAgreesWithEncodingJSON(t *testing.T) {
	encoded, err := abi.Encode(&abi.ToolCallInput{
		Context: abi.InvocationInfo{AppName: "app", UserID: "u", SessionID: "s", InvocationID: "e-1", AgentName: "root", Branch: "root.sub", FunctionCallID: "fc-1",
			UserContent: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "hi"}}}},
		Tool:         "get_weather",
		Args:         map[string]any{"city": "Zürich", "days": 3, "nested": map[string]any{"a": []any{1, "x", nil}}},
		Confirmation: &abi.ToolConfirmation{Hint: "ok?", Confirmed: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		input string
		fast  bool // the fast path takes it
	}{
		{string(encoded), true},
		{`{"abiVersion":1,"context":{"appName":"a"},"tool":"t","args":{"s":"a,}]\"b"}}`, true},
		{` { "abiVersion" : 1 , "tool" : "t" , "args" : { } } `, true},
		{`{"abiVersion":1,"tool":"t","args":null,"context":null}`, true},
		{`{"abiVersion":1,"tool":"t\u0041"}`, false},            // escape in a string
		{`{"abiVersion":1,"Tool":"t"}`, false},                  // case-insensitive match
		{`{"abiVersion":1,"tool":"t","extra":true}`, false},     // unknown field
		{`{"abiVersion":2,"tool":"t"}`, false},                  // version
		{`{"abiVersion":1,"tool":"t","args":{"a":1}`, false},    // truncated
		{`{"abiVersion":1,"tool":"t","args":{"a":1}} x`, false}, // trailing data
		{`{"abiVersion":1,"context":{"appName":7},"tool":"t"}`, false},
	} {
		var fast toolCallInput
		if got := fastToolCallInput([]byte(tc.input), &fast); got != tc.fast {
			t.Errorf("fastToolCallInput(%s) = %v, want %v", tc.input, got, tc.fast)
			continue
		}
		var viaDecode, viaJSON toolCallInput
		errDecode := decodeToolCallInput([]byte(tc.input), &viaDecode)
		errJSON := decode([]byte(tc.input), &viaJSON)
		if (errDecode == nil) != (errJSON == nil) {
			t.Errorf("%s: decodeToolCallInput error %v, encoding/json %v", tc.input, errDecode, errJSON)
			continue
		}
		if errJSON != nil {
			continue
		}
		// Args compare as values: the fast path keeps the raw bytes.
		var a, b any
		json.Unmarshal(viaDecode.Args, &a)
		json.Unmarshal(viaJSON.Args, &b)
		viaDecode.Args, viaJSON.Args = nil, nil
		if !reflect.DeepEqual(viaDecode, viaJSON) || !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\n fast %+v %v\n json %+v %v", tc.input, viaDecode, a, viaJSON, b)
		}
	}
}

func TestMissingRequired(t *testing.T) {
	for _, tc := range []struct {
		raw, missing string
		ok           bool
	}{
		{`{"city":"Paris","days":null}`, "days", true},
		{`{"city":"Paris","days":2}`, "", true},
		{`{"days":2}`, "city", true},
		{`{"ci\u0074y":"Paris"}`, "", false},
		{`[1]`, "", false},
	} {
		missing, ok := missingRequired([]byte(tc.raw), []string{"city", "days"})
		if missing != tc.missing || ok != tc.ok {
			t.Errorf("missingRequired(%s) = %q, %v; want %q, %v", tc.raw, missing, ok, tc.missing, tc.ok)
		}
	}
}

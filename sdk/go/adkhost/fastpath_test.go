package adkhost

import (
	"encoding/json"
	"reflect"
	"strings"
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
		{`{"abiVersion":1,"tool":"t\u0041"}`, true},  // escape in a string
		{`{"abiVersion":1,"tool":"t\ud800"}`, false}, // a surrogate, which encoding/json replaces
		{`{"abiVersion":1,"tool":null}`, false},
		{`{"abiVersion":1,"tool":"t","context":{"appName":"Zürich \"a\"\n","userId":null,"branch":"a.b"}}`, true},
		{`{"abiVersion":1,"tool":"t","context":{"appName":"a"},"context":{"userId":"u"}}`, false}, // encoding/json merges both
		{`{"abiVersion":1,"tool":"t","context":{"appName":"a",}}`, false},
		{`{"abiVersion":1,"tool":"t","context":{"appName":"a" "userId":"u"}}`, false},
		{`{"abiVersion":1,"tool":"t","context":{"appName":"bad \xff"}}`, false}, // invalid UTF-8
		{`{"abiVersion":1,"tool":"t","context":{"appName":"a\u0001"}}`, true},
		{"{\"abiVersion\":1,\"tool\":\"t\",\"context\":{\"appName\":\"a\x01\"}}", false}, // control character
		{`{"abiVersion":1,"tool":"t","context":{}}`, true},
		{`{"abiVersion":1,"tool":"t","context":nul}`, false},
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

// The path for abi.Encode's own output takes every tool_call input the
// host writes, bar the rare shapes it leaves to the next path, and agrees
// with encoding/json; any other spelling of the same message goes on.
func TestEncodedToolCallInput(t *testing.T) {
	info := abi.InvocationInfo{AppName: "app", UserID: "u", SessionID: "s", InvocationID: "e-1", AgentName: "root"}
	full := info
	full.Branch, full.FunctionCallID = "root.sub", "fc-1"
	text := func(ss ...string) *abi.Content {
		c := &abi.Content{Role: "user"}
		for _, s := range ss {
			c.Parts = append(c.Parts, &abi.Part{Text: s})
		}
		return c
	}
	withContent := func(i abi.InvocationInfo, c *abi.Content) abi.InvocationInfo { i.UserContent = c; return i }
	for _, tc := range []struct {
		in   abi.ToolCallInput
		fast bool // encodedToolCallInput takes it
	}{
		{abi.ToolCallInput{Context: info, Tool: "t", Args: map[string]any{"a": 1}}, true},
		{abi.ToolCallInput{Context: withContent(full, text("Weather in Paris?")), Tool: "get_weather", Args: map[string]any{"city": "Paris", "days": 3}}, true},
		{abi.ToolCallInput{Context: withContent(full, text("Zürich \"x\"\n<b>", "second", "\u2028")), Tool: "t\u00e9", Args: map[string]any{}}, true},
		{abi.ToolCallInput{Context: abi.InvocationInfo{}, Tool: "t"}, true},              // empty strings, args null
		{abi.ToolCallInput{Context: withContent(info, text("a", "")), Tool: "t"}, false}, // an empty part is {}
		{abi.ToolCallInput{Context: withContent(info, &abi.Content{Parts: []*abi.Part{{Text: "x"}}}), Tool: "t"}, false},
		{abi.ToolCallInput{Context: withContent(info, &abi.Content{Role: "user"}), Tool: "t"}, false},
		{abi.ToolCallInput{Context: withContent(info, &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "x", Thought: true}}}), Tool: "t"}, false},
		{abi.ToolCallInput{Context: info, Tool: "t", Confirmation: &abi.ToolConfirmation{Confirmed: true}}, false},
	} {
		encoded, err := abi.Encode(&tc.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, input := range []string{string(encoded), " " + string(encoded), strings.Replace(string(encoded), `"tool":`, `"tool" :`, 1)} {
			fast := input == string(encoded) && tc.fast
			var got, want toolCallInput
			if ok := encodedToolCallInput(&inputStrings{data: []byte(input)}, &got); ok != fast {
				t.Errorf("encodedToolCallInput(%s) = %v, want %v", input, ok, fast)
			}
			if err := decodeToolCallInput([]byte(input), &got); err != nil {
				t.Fatalf("%s: %v", input, err)
			}
			if err := decode([]byte(input), &want); err != nil {
				t.Fatal(err)
			}
			var a, b any
			json.Unmarshal(got.Args, &a)
			json.Unmarshal(want.Args, &b)
			got.Args, want.Args = nil, nil
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(a, b) {
				t.Errorf("%s:\n got %+v %v\nwant %+v %v", input, got, a, want, b)
			}
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

// checkContent decodes raw as a user content through the tool_call fast
// path and through encoding/json, and fails unless both agree; it returns
// whether fastContent took it.
func checkContent(t *testing.T, raw string) bool {
	t.Helper()
	input := []byte(`{"abiVersion":1,"tool":"t","context":{"userContent":` + raw + `}}`)
	var got, want toolCallInput
	gotErr := decodeToolCallInput(input, &got)
	wantErr := decode(input, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Errorf("%s: error %v, encoding/json %v", raw, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got.Context.UserContent)
		w, _ := json.Marshal(want.Context.UserContent)
		t.Errorf("%s:\n got %s %#v\nwant %s %#v", raw, g, got.Context.UserContent, w, want.Context.UserContent)
	}
	data := []byte(raw)
	return fastContent(&inputStrings{data: data}, data, new(abi.Content))
}

func TestFastContentAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{"role":"user","parts":[{"text":"Weather in Paris?"}]}`, true},
		{`{"role":"user","parts":[{"text":"a \"quoted\"\nline\t\\ \/ \u00e9\u4e16 \b\f\r"},{"text":"second"}]}`, true},
		{`{"parts":[]}`, true},
		{`{"parts":null,"role":null}`, true},
		{`{"parts":[null,{"text":null},{}]}`, true},
		{`{}`, true},
		{` { "role" : "user" , "parts" : [ { "text" : "x" } ] } `, true},
		{`{"role":"user","parts":[{"text":"\ud83d\ude00"}]}`, false},     // surrogates
		{`{"role":"user","parts":[{"text":"\ud800"}]}`, false},           // lone surrogate
		{`{"role":"user","parts":[{"text":"bad \xff"}]}`, false},         // invalid UTF-8
		{`{"role":"user","parts":[{"text":"x","thought":true}]}`, false}, // another field
		{`{"role":"user","parts":[{"inlineData":{"data":"AAEC"}}]}`, false},
		{`{"Role":"user"}`, false},         // case-insensitive
		{`{"role":"a","role":"b"}`, false}, // repeated key
		{`{"parts":[{"text":"a"}],"parts":[{"text":"b"}]}`, false},
		{`{"parts":[{"text":"\x"}]}`, false},
		{`{"parts":[{"text":"\u12"}]}`, false},
		{`{"parts":[{"text":1}]}`, false},
		{`{"parts":{}}`, false},
		{`{"parts":[{"text":"a"},]}`, false},
		{`{"parts":[{"text":"a"}}`, false},
		{`[]`, false},
	} {
		if fast := checkContent(t, tc.raw); fast != tc.fast {
			t.Errorf("%s: fastContent took it: %v, want %v", tc.raw, fast, tc.fast)
		}
	}
}

func FuzzFastContent(f *testing.F) {
	for _, s := range []string{`{"role":"user","parts":[{"text":"hi\n\u00e9"}]}`, `{"parts":[]}`, `{"parts":[null]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkContent(t, raw) })
}

func FuzzFastToolCallInput(f *testing.F) {
	for _, s := range []string{
		`{"abiVersion":1,"context":{"appName":"a","userId":"u","sessionId":"s","invocationId":"e","agentName":"r","functionCallId":"f","userContent":{"role":"user","parts":[{"text":"hi"},{"text":"\u00e9\""}]}},"tool":"t","args":{"a":1}}`,
		`{"abiVersion":1,"context":{"appName":"a","userContent":{"role":"user","parts":[{"text":"hi"}]},"functionCallId":"f"},"tool":"t","args":{"a":1}}`,
		`{"abiVersion":1,"tool":"t\u0041","context":{"branch":"Zürich \"x\""},"confirmation":{"confirmed":true}}`,
		` {"abiVersion":1,"tool":"t","context":null,"args":null} `,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var fast, slow toolCallInput
		errFast := decodeToolCallInput([]byte(input), &fast)
		errSlow := decode([]byte(input), &slow)
		if errFast == nil && errSlow != nil && len(fast.Args) > 0 && !json.Valid(fast.Args) {
			return // arguments are checked when the tool decodes them
		}
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%s: error %v, encoding/json %v", input, errFast, errSlow)
		}
		if errSlow != nil {
			return
		}
		var a, b any
		json.Unmarshal(fast.Args, &a)
		json.Unmarshal(slow.Args, &b)
		fast.Args, slow.Args = nil, nil
		if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s:\n fast %+v %v\n json %+v %v", input, fast, a, slow, b)
		}
	})
}

// scanStringBytes is scanString a byte at a time, as it was before it read
// eight bytes at a time.
func scanStringBytes(data []byte, i int) (end int, plain bool) {
	plain = true
	for i++; i < len(data); i++ {
		c := data[i]
		if c == '"' {
			return i + 1, plain
		}
		if c == '\\' {
			plain = false
			i++
		} else if c < 0x20 || c >= 0x80 {
			plain = false
		}
	}
	return -1, false
}

func checkScanString(t *testing.T, data []byte) {
	for i := range data {
		if data[i] != '"' {
			continue
		}
		e1, p1 := scanString(data, i)
		e2, p2 := scanStringBytes(data, i)
		if e1 != e2 || p1 != p2 {
			t.Fatalf("scanString(%q, %d) = %d, %v; byte at a time %d, %v", data, i, e1, p1, e2, p2)
		}
	}
}

func TestScanString(t *testing.T) {
	special := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff, 'a', 'é' & 0xff}
	for _, s := range []string{
		`"abcdefghijklmnopqrstuvwxyz"`, `"abcdefg\"hijklmnop"`, `"abcdefgh\\"`, `"abcdefghijklmno\`, `"` + "caf\u00e9 au lait, s'il vous pla\u00eet" + `"`,
		`""`, `"a"`, `"abcdefgh"`, `"abcdefghi"`, "\"abc\x01defghijklmnop\"", `"0123456789abcdef\u0041"`,
	} {
		checkScanString(t, []byte(s))
	}
	// Each special byte at each position of a string longer than two words.
	for _, c := range special {
		for pos := 1; pos < 26; pos++ {
			b := []byte(`"abcdefghijklmnopqrstuvwxyz"tail`)
			b[pos] = c
			checkScanString(t, b)
		}
	}
}

func FuzzScanString(f *testing.F) {
	f.Add([]byte(`"abcdefgh\"ijklmnop" "x\\" "é"`))
	f.Fuzz(func(t *testing.T, data []byte) { checkScanString(t, data) })
}

// FuzzEncodedToolCallInput fuzzes the messages the host writes, which the
// path for abi.Encode's output takes, rather than arbitrary bytes.
func FuzzEncodedToolCallInput(f *testing.F) {
	f.Add("app", "root.sub", "fc-1", "user", "Weather in Paris?", "é\"\n<", uint8(2), "Paris")
	f.Add("", "", "", "", "", "", uint8(0), "")
	f.Fuzz(func(t *testing.T, app, branch, call, role, text1, text2 string, parts uint8, city string) {
		in := &abi.ToolCallInput{
			Context: abi.InvocationInfo{AppName: app, UserID: text2, SessionID: role, InvocationID: city, AgentName: text1, Branch: branch, FunctionCallID: call},
			Tool:    city,
			Args:    map[string]any{"city": city, "n": int(parts)},
		}
		if parts%4 > 0 {
			c := &abi.Content{Role: role}
			for i := range int(parts % 4) {
				c.Parts = append(c.Parts, &abi.Part{Text: []string{text1, text2, city}[i]})
			}
			in.Context.UserContent = c
		}
		encoded, err := abi.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		var got, want toolCallInput
		if err := decodeToolCallInput(encoded, &got); err != nil {
			t.Fatalf("%s: %v", encoded, err)
		}
		if err := decode(encoded, &want); err != nil {
			t.Fatal(err)
		}
		if string(got.Args) != string(want.Args) {
			t.Fatalf("%s: args %s, want %s", encoded, got.Args, want.Args)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", encoded, got, want)
		}
	})
}

// literal, which compares words, agrees with strings.HasPrefix for every
// key length from 0 to 40, at every offset, with a difference at each
// position of the key and with the data cut short.
func TestLiteral(t *testing.T) {
	const text = `{"abiVersion":1,"context":{"appName":"weather_app","userId":"u"}`
	for n := 0; n <= 40; n++ {
		for i := 0; i+n <= len(text); i++ {
			key := text[i : i+n]
			check := func(data []byte, at int) {
				t.Helper()
				want := at >= 0 && at <= len(data) && strings.HasPrefix(string(data[at:]), key)
				end, ok := literal(data, at, key)
				if ok != want || (ok && end != at+n) || (!ok && end != at) {
					t.Fatalf("literal(%q, %d, %q) = %d, %v; want match %v", data, at, key, end, ok, want)
				}
			}
			check([]byte(text), i)
			check([]byte(text[:i+n-min(n, 1)]), i) // one byte short
			for k := range n {
				b := []byte(text)
				b[i+k] ^= 0x20
				check(b, i)
			}
		}
	}
}

package python_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// TestCLoads: the runtime's C decoder of the ABI's JSON (_adkhost.loads)
// gives what json.loads gives, of the same types (int and float, -0.0,
// inf, key order and repeated keys, escapes and surrogates), and leaves
// what it does not take (NaN, long numbers, control characters, bad
// escapes or UTF-8, deep nesting, syntax errors) to the json module.
func TestCLoads(t *testing.T) {
	p := toolPool(t, "tests/json_loads.py")
	if got := callResult(t, p, `{"tool":"check","args":{}}`); got != `{"decoded":58,"left":55}` {
		t.Errorf("check: %s", got)
	}
}

// TestCToolCall: a tool call the runtime answers in C (every argument a
// parameter, no enum) answers byte for byte as the SDK's _tool_call does
// with the same arguments (an argument that is no parameter makes the
// runtime hand the call to it): values and types, ints to float
// parameters, the context, an exception, an async tool, a result the C
// writer leaves to the json module; and the calls it always leaves to
// _tool_call (a missing argument, an enum, an unknown tool) answer as
// before. The tool caller tells which of the two called it.
func TestCToolCall(t *testing.T) {
	ctx := context.Background()
	p := toolPool(t, "tests/json_loads.py")
	const info = `"context":{"agentName":"root","functionCallId":"c1"}`
	for _, c := range []struct{ tool, args, want string }{
		{"kinds", `{"s":"é\u0000\ud83d\ude00","n":3,"f":2,"flag":true,"items":[1,{"a":null}]}`,
			`{"result":{"s":"é\u0000😀","n":[3,"int"],"f":[2.0,"float"],"flag":true,"items":[1,{"a":null}],"agent":"root","ctx":"Context"},"abiVersion":1}`},
		{"kinds", `{"s":"x","n":1.5,"f":1e400}`,
			`{"result":{"s":"x","n":[1.5,"float"],"f":[Infinity,"float"],"flag":false,"items":null,"agent":"root","ctx":"Context"},"abiVersion":1}`},
		{"kinds", `{"s":"x","f":123456789012345678901234567890}`,
			`{"result":{"s":"x","n":[0,"int"],"f":[1.2345678901234568e+29,"float"],"flag":false,"items":null,"agent":"root","ctx":"Context"},"abiVersion":1}`},
		{"kinds", `{"s":"x","f":` + strings.Repeat("9", 400) + `}`, `{"error":"OverflowError: int too large to convert to float","abiVersion":1}`},
		{"raises", `{"x":3}`, `{"error":"KeyError: 'no 3'","abiVersion":1}`},
		{"obj", `{}`, `{"result":{"k":[1,"red"]},"abiVersion":1}`},
		{"later", `{"x":2}`, `{"result":[2,2],"abiVersion":1}`},
		{"nan", `null`, `{"result":NaN,"abiVersion":1}`},
	} {
		c := c
		in := `{` + info + `,"tool":"` + c.tool + `","args":` + c.args + `}`
		if got := call(t, ctx, p, in); got != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.tool, c.args, got, c.want)
		}
		// The same call through _tool_call.
		extra := `{"zz_not_a_parameter":1}`
		if c.args != `{}` && c.args != `null` {
			extra = strings.TrimSuffix(c.args, "}") + `,"zz_not_a_parameter":1}`
		}
		if got := call(t, ctx, p, `{`+info+`,"tool":"`+c.tool+`","args":`+extra+`}`); got != c.want {
			t.Errorf("%s %s through _tool_call:\n got %s\nwant %s", c.tool, extra, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"tool":"caller","args":{"x":1}}`, `{"result":"C","abiVersion":1}`},
		{`{"tool":"caller"}`, `{"result":"C","abiVersion":1}`},
		{`{"tool":"caller","args":{"x":1,"y":2}}`, `{"result":"_tool_call","abiVersion":1}`},
		{`{"tool":"kinds","args":{"n":1}}`, "{\"result\":{\"error\":\"Invoking `kinds()` failed as the following mandatory input parameters are not present:\\ns\\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters.\"},\"abiVersion\":1}"},
		{`{"tool":"colored","args":{"color":"red"}}`, `{"result":"RED","abiVersion":1}`},
		{`{"tool":"colored","args":{"color":"blue"}}`, `{"error":"ValueError: 'blue' is not a valid Color","abiVersion":1}`},
		{`{"tool":"nope","args":{}}`, `{"error":"no tool 'nope' in this module","abiVersion":1}`},
		{`{"tool":"kinds","args":[1]}`, `{"error":"AttributeError: 'list' object has no attribute 'keys'","abiVersion":1}`},
		{`{"tool":"raises","args":{"x":NaN}}`, `{"error":"KeyError: 'no nan'","abiVersion":1}`},
		{`[1]`, `{"error":"AttributeError: 'list' object has no attribute 'get'","abiVersion":1}`},
		{"{\"tool\":\"kinds\",\"args\":{\"s\":\"\xff\"}}", `{"error":"UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 29: invalid start byte","abiVersion":1}`},
	} {
		if got := call(t, ctx, p, c.in); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func call(t testing.TB, ctx context.Context, p *sandbox.Pool, in string) string {
	t.Helper()
	raw, err := p.Call(ctx, abi.HookToolCall, []byte(in), abi.UnavailableHost{})
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	return string(raw)
}

// callResult calls p with in and returns the output's result, failing on
// an error.
func callResult(t testing.TB, p *sandbox.Pool, in string) string {
	t.Helper()
	raw := call(t, context.Background(), p, in)
	var out struct {
		Error  string          `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil || out.Error != "" {
		t.Fatalf("%s: %s (%v)", in, raw, err)
	}
	return string(out.Result)
}

// FuzzCLoads: hostile JSON text, decoded by the C decoder in the guest,
// decodes to what json.loads gives or is left to it; and the same bytes
// as a whole tool call's input get an answer (an error or a result), never
// a trap.
func FuzzCLoads(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5,-0,1e999,"\ud83d\ude00\u0000"],"a":null}`, `"\ud800\udc00\ud800"`,
		"\"\xed\xa0\x80\"", `[[[[[]]]]]`, `NaN`, `-01`, `1.5e-400`, `{"tool":"compare","args":{"data":""}}`,
		`{"context":{"x":"}"},"tool":"kinds","args":{"s":"\"","f":1}}`, "\"\xff\"", `123456789012345678`} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	p := toolPool(f, "tests/json_loads.py")
	f.Fuzz(func(t *testing.T, data []byte) {
		in := `{"tool":"compare","args":{"data":"` + base64.StdEncoding.EncodeToString(data) + `"}}`
		got := callResult(t, p, in)
		if got != `{"c":true,"same":true}` && got != `{"c":false,"same":true}` {
			t.Fatalf("%q: %s", data, got)
		}
		raw := call(t, ctx, p, string(data))
		if !strings.HasPrefix(raw, `{`) {
			t.Fatalf("%q as input: %q", data, raw)
		}
	})
}

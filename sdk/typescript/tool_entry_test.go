package typescript_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// toolPool loads tests/tool_entry.ts into a pool of one instance.
func toolPool(t *testing.T) *sandbox.Pool {
	t.Helper()
	ctx := context.Background()
	rt := newRuntime(t)
	m, err := rt.Load(ctx, buildModule(t, "tests/tool_entry.ts"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: t.Name(), Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestToolEntryContext: a tool reads the same context, arguments and
// confirmation whether the runtime hands the context on as text (parsed
// when read) or the input goes to the SDK's dispatcher parsed whole (keys
// with escapes, a context nested past the runtime's parser, input that is
// not JSON the runtime takes); input that is not JSON fails the call.
func TestToolEntryContext(t *testing.T) {
	p := toolPool(t)
	ctx := context.Background()
	text := `é € 😀 \"q\" \\ \u2028 \u0000 </script>`
	info := `{"appName":"app","userId":"u-1","sessionId":"s-1","invocationId":"e-1","agentName":"root",` +
		`"branch":"root.sub","functionCallId":"call-1","userContent":{"role":"user","parts":[{"text":"` + text + `"}]}}`
	deep := strings.Repeat(`[`, 70) + `"x"` + strings.Repeat(`]`, 70)
	deepInfo := `{"appName":"app","userContent":{"role":"user","parts":[{"text":"t","deep":` + deep + `}]}}`
	for _, c := range []struct {
		name, input string
		context     string // the context the tool should see; "" for none
		args        string
		confirm     string
	}{
		{"plain", `{"abiVersion":1,"context":` + info + `,"tool":"info","args":{"city":"Paris","days":3}}`, info, `{"city":"Paris","days":3}`, "null"},
		{"order and spaces", " {\n\"args\" : {\"a\":[1,2.5,-0,1e400,\"\\u00e9\"]} ,\t\"tool\":\"info\", \"extra\":{\"x\":[true,false,null]},\"context\":" + info + "} \n", info, `{"a":[1,2.5,0,null,"é"]}`, "null"},
		{"confirmation", `{"context":` + info + `,"tool":"info","args":{},"confirmation":{"confirmed":true,"payload":{"n":1}}}`, info, `{}`, `{"confirmed":true,"payload":{"n":1}}`},
		{"repeated keys", `{"tool":"nope","context":{"appName":"first"},"tool":"info","context":` + info + `}`, info, `{}`, "null"},
		{"no args", `{"tool":"info","context":` + info + `}`, info, `{}`, "null"},
		{"no context", `{"tool":"info","args":{"x":1}}`, "", `{"x":1}`, "null"},
		{"escaped key", `{"\u0074ool":"info","context":` + info + `,"args":{"k":"v"}}`, info, `{"k":"v"}`, "null"},
		{"deep context", `{"tool":"info","context":` + deepInfo + `}`, deepInfo, `{}`, "null"},
		{"context not an object", `{"tool":"info","context":"appName"}`, "", `{}`, "null"},
		{"bytes beyond UTF-8", "{\"tool\":\"info\",\"context\":{\"appName\":\"a\xffb\"}}", `{"appName":"a\ufffdb"}`, `{}`, "null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := p.Call(ctx, abi.HookToolCall, []byte(c.input), abi.UnavailableHost{})
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Result struct {
					Context      map[string]any
					Same         bool
					Confirmation any
					Args         any
				}
				Error string
			}
			if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
				t.Fatalf("output %s (%v)", raw, err)
			}
			want := map[string]any{}
			if c.context != "" {
				var full map[string]any
				if err := json.Unmarshal([]byte(c.context), &full); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"invocationId", "agentName", "userId", "sessionId", "appName", "branch", "functionCallId", "userContent"} {
					if v, ok := full[k]; ok {
						want[k] = v
					}
				}
			}
			if !reflect.DeepEqual(out.Result.Context, want) {
				t.Errorf("context %v, want %v", out.Result.Context, want)
			}
			if c.context != "" && strings.Contains(c.context, "userContent") && !out.Result.Same {
				t.Error("userContent read twice gave two objects")
			}
			for _, f := range []struct {
				got  any
				want string
			}{{out.Result.Args, c.args}, {out.Result.Confirmation, c.confirm}} {
				var w any
				if err := json.Unmarshal([]byte(f.want), &w); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(f.got, w) {
					t.Errorf("got %v, want %s", f.got, f.want)
				}
			}
		})
	}
	for _, c := range []struct{ name, input, error string }{
		{"truncated", `{"tool":"info","context":{"appName":"a"`, "SyntaxError"},
		{"trailing data", `{"tool":"info","context":{"appName":"a"}} x`, "SyntaxError"},
		{"bad escape in context", `{"tool":"info","context":{"appName":"\q"}}`, "SyntaxError"},
		{"unknown tool", `{"tool":"nope","context":{}}`, `no tool "nope" in this module`},
		{"no tool", `{"context":{}}`, `no tool "undefined" in this module`},
		{"not an object", `[1]`, `no tool "undefined" in this module`},
		{"empty", ``, `no tool "undefined" in this module`},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := p.Call(ctx, abi.HookToolCall, []byte(c.input), abi.UnavailableHost{})
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ Error string }
			if err := json.Unmarshal(raw, &out); err != nil || !strings.Contains(out.Error, c.error) {
				t.Errorf("output %s, want an error with %q", raw, c.error)
			}
		})
	}
}

// TestToolEntryResults: the output of each kind of result, as the runtime
// writes it or leaves it to the SDK (toJSON, functions, BigInt, cycles),
// and of a tool that throws, rejects or never settles.
func TestToolEntryResults(t *testing.T) {
	p := toolPool(t)
	ctx := context.Background()
	for _, c := range []struct{ kind, want string }{
		{"undefined", `{"result":null,"abiVersion":1}`},
		{"string", "{\"result\":\"é \u2028 😀 \\\"q\\\"\",\"abiVersion\":1}"},
		{"date", `{"result":{"when":"1970-01-01T00:00:00.000Z"},"abiVersion":1}`},
		{"tojson", `{"result":{"replaced":true},"abiVersion":1}`},
		{"function", `{"abiVersion":1}`},
		{"await", `{"result":[1,{"x":null}],"abiVersion":1}`},
		{"plain", `{"result":"plain","abiVersion":1}`},
		{"bigint", `{"error":"TypeError: BigInt are forbidden in JSON.stringify","abiVersion":1}`},
		{"throw", `{"error":"Error: boom","abiVersion":1}`},
		{"reject", `{"error":"TypeError: rejected","abiVersion":1}`},
	} {
		in := `{"abiVersion":1,"context":{"appName":"a"},"tool":"answer","args":{"kind":"` + c.kind + `"}}`
		raw, err := p.Call(ctx, abi.HookToolCall, []byte(in), abi.UnavailableHost{})
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if string(raw) != c.want {
			t.Errorf("%s: output %s, want %s", c.kind, raw, c.want)
		}
	}
	for _, c := range []struct{ kind, want string }{
		{"cycle", "circular"},
		{"never", "a promise never settled"},
	} {
		in := `{"context":{},"tool":"answer","args":{"kind":"` + c.kind + `"}}`
		raw, err := p.Call(ctx, abi.HookToolCall, []byte(in), abi.UnavailableHost{})
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		var out struct{ Error string }
		if err := json.Unmarshal(raw, &out); err != nil || !strings.Contains(out.Error, c.want) {
			t.Errorf("%s: output %s, want an error with %q", c.kind, raw, c.want)
		}
	}
}

// TestToolEntryShapes: calls whose arguments all have new keys (a new
// shape each, more than the runtime keeps), with a new class and a cycle
// per call, answer their own arguments: shapes kept from earlier calls
// and let go do not mix objects up.
func TestToolEntryShapes(t *testing.T) {
	p := toolPool(t)
	ctx := context.Background()
	for i := range 3000 {
		args := fmt.Sprintf(`{"a%d":%d,"b%d":{"n%d":[%d,"s"],"z":null},"c":"%d"}`, i, i, i, i%7, i, i)
		in := `{"context":{},"tool":"shapes","args":` + args + `}`
		raw, err := p.Call(ctx, abi.HookToolCall, []byte(in), abi.UnavailableHost{})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Result struct {
				Keys []string
				JSON string
				Same bool
			}
			Error string
		}
		if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
			t.Fatalf("call %d: output %s (%v)", i, raw, err)
		}
		keys := []string{fmt.Sprint("a", i), fmt.Sprint("b", i), "c"}
		if !reflect.DeepEqual(out.Result.Keys, keys) || out.Result.JSON != args || !out.Result.Same {
			t.Fatalf("call %d: %+v, want keys %v and JSON %s", i, out.Result, keys, args)
		}
	}
}

//go:build !wasip1

package gosdktest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

// The end-to-end tests build guests that use the SDK with GOOS=wasip1
// GOARCH=wasm -buildmode=c-shared, load them in the real sandbox and call
// their hooks with sandbox.Invoke, which decodes outputs strictly as the
// host does. Builds are cached under os.TempDir by a hash of the sources
// (guest, SDK, abi, go.mod) and the toolchain, as the sandbox tests do.

// sdkRoot is the Go SDK's module (sdk/go), relative to this package.
const sdkRoot = "../../sdk/go"

type built struct {
	once sync.Once
	wasm []byte
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*built{}
)

// guest builds the Go guest in dir (relative to the repository root).
func guest(t testing.TB, dir string) []byte {
	t.Helper()
	buildsMu.Lock()
	b, ok := builds[dir]
	if !ok {
		b = &built{}
		builds[dir] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() { b.wasm, b.err = buildGuest(dir) })
	if b.err != nil {
		t.Fatalf("building guest %s: %v", dir, b.err)
	}
	return b.wasm
}

func buildGuest(dir string) ([]byte, error) {
	return wasmbuild.Build(wasmbuild.Spec{
		Dir: sdkRoot, Package: "./" + dir,
		Sources: []string{dir, "adkhost", "../../abi"}, Cache: "adkhost-sdk-go-guests",
	})
}

func runtimeFor(t *testing.T) *sandbox.Runtime {
	t.Helper()
	ctx := context.Background()
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sandbox-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	return r
}

func pool(t *testing.T, dir string, grants sandbox.Grants) *sandbox.Pool {
	t.Helper()
	ctx := context.Background()
	r := runtimeFor(t)
	m, err := r.Load(ctx, guest(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Grants: grants, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var info = abi.InvocationInfo{AppName: "app", UserID: "u1", SessionID: "s1", InvocationID: "e-1", AgentName: "root"}

func toolInfo() abi.InvocationInfo {
	i := info
	i.FunctionCallID = "call-1"
	return i
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A guest that does not log through slog links neither log/slog nor
// time's formatting: 190 KB of code that every cold start compiles and
// validates. The SDK (and abi, in a guest's build) must not import
// log/slog, nor name time.Time's type, which keeps its methods. The names
// are the module's name section, where Go writes "/" as "_".
func TestGuestCodeSize(t *testing.T) {
	wasm := guest(t, "examples/weather")
	for _, name := range []string{"log_slog.", "log.formatHeader", "time.Time.appendFormat"} {
		if bytes.Contains(wasm, []byte(name)) {
			t.Errorf("the weather example links %s", name)
		}
	}
	if !bytes.Contains(wasm, []byte("github.com_adkhost_adkhost_sdk_go_adkhost.")) {
		t.Fatal("the module has no name section to check")
	}
}

// TestWeatherExample runs the documented example: its describe message
// (the derived schema), its tool and its before_model callback, with state
// reaching the host.
func TestWeatherExample(t *testing.T) {
	ctx := context.Background()
	p := pool(t, "examples/weather", sandbox.Grants{State: true})

	d := p.Module().Describe()
	want := `{"abiVersion":1,"name":"weather","version":"1.0.0","tools":[{"name":"get_weather","description":"Returns the weather forecast of a city.",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string","description":"the city, e.g. Paris"},` +
		`"days":{"type":"integer","description":"how many days to forecast, 1 to 3; 1 if absent"}},"required":["city"]}}],` +
		`"hooks":["tool_call","before_model"],"capabilities":["state"]}`
	if got := asJSON(t, d); got != want {
		t.Errorf("describe:\n got %s\nwant %s", got, want)
	}

	host := &adkhosttest.Host{}
	out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: toolInfo(), Tool: "get_weather", Args: map[string]any{"city": " Paris ", "days": 2},
	}, host)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := asJSON(t, out.Result), `{"city":"Paris","days":[{"highC":21,"summary":"sunny"},{"highC":22,"summary":"sunny"}]}`; got != want || out.Error != "" {
		t.Errorf("get_weather = %s (error %q), want %s", got, out.Error, want)
	}
	if got, want := host.Recorded(), []string{`state_set user:last_city "Paris"`}; !slices.Equal(got, want) {
		t.Errorf("host calls = %q, want %q", got, want)
	}

	// A tool error, and a missing required argument, are the call failing.
	out, err = sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: toolInfo(), Tool: "get_weather", Args: map[string]any{"city": "Paris", "days": 9},
	}, host)
	if err != nil || out.Error != "at most 3 days, not 9" || out.Result != nil {
		t.Errorf("days=9: %+v, %v", out, err)
	}
	out, err = sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: toolInfo(), Tool: "get_weather", Args: map[string]any{"days": 1},
	}, host)
	if err != nil || out.Error != `missing required argument "city"` {
		t.Errorf("no city: %+v, %v", out, err)
	}

	host = &adkhosttest.Host{State: map[string]json.RawMessage{"user:units": []byte(`"imperial"`)}}
	mo, err := sandbox.Invoke[abi.ModelOutput](ctx, p, abi.HookBeforeModel, &abi.BeforeModelInput{
		Context: info,
		Request: &abi.LlmRequest{Model: "gemini-2.5-flash", Contents: []*abi.Content{{Role: "user", Parts: []*abi.Part{{Text: "Weather in Paris?"}}}}},
	}, host)
	if err != nil {
		t.Fatal(err)
	}
	if mo.Response != nil || mo.Request == nil {
		t.Fatalf("before_model = %s, want a changed request and no response", asJSON(t, mo))
	}
	if got, want := asJSON(t, mo.Request), `{"model":"gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],`+
		`"config":{"systemInstruction":{"parts":[{"text":"Give temperatures in imperial units."}]}}}`; got != want {
		t.Errorf("request:\n got %s\nwant %s", got, want)
	}
	if got, want := host.Recorded(), []string{"state_get user:units"}; !slices.Equal(got, want) {
		t.Errorf("host calls = %q, want %q", got, want)
	}
}

// TestHostFunctions calls every host function from a guest through the SDK.
func TestHostFunctions(t *testing.T) {
	ctx := context.Background()
	p := pool(t, "adkhost/testdata/sdkguest", sandbox.Grants{
		State: true, Actions: true, Artifacts: true, Config: map[string]string{"greeting": "hello"}, Memory: true,
	})
	ti := toolInfo()
	host := &adkhosttest.Host{Info: &ti}
	out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{Context: ti, Tool: "host_tour", Args: map[string]any{}}, host)
	if err != nil {
		t.Fatal(err)
	}
	if out.Error != "" {
		t.Fatal(out.Error)
	}
	want := map[string]any{
		"Set": "OK", "Get": "42", "Missing": "NOT_FOUND", "MissingIsNotFound": "true", "BadKey": "INVALID_ARGUMENT",
		"Delete": "OK", "AfterDelete": "null",
		"Transfer": "OK", "Escalate": "OK", "Skip": "OK", "Confirm": "OK",
		"Saved": int64(0), "Loaded": "saved text", "List": []any{"notes.txt"},
		"Config": "hello", "ConfigMissing": "NOT_FOUND",
		"Invocation": "e-1", "ContextMatches": true,
	}
	if !reflect.DeepEqual(out.Result, want) {
		t.Errorf("host_tour =\n %v\nwant\n %v", out.Result, want)
	}
	wantCalls := []string{
		"state_set temp:count 41", "state_get temp:count", "state_get missing", "state_delete user:gone", "state_get user:gone",
		"transfer_to_agent helper", "escalate", "skip_summarization", `request_confirmation spend 3 credits? {"credits":3}`,
		"artifact_save notes.txt", "artifact_load notes.txt -1", "artifact_list", "invocation_info",
	}
	if got := host.Recorded(); !slices.Equal(got, wantCalls) {
		t.Errorf("host calls:\n got %q\nwant %q", got, wantCalls)
	}
	if got, want := host.LogLines(), []string{"INFO hello from the guest", "WARN structured tool=host_tour n=2"}; !slices.Equal(got, want) {
		t.Errorf("logs = %q, want %q", got, want)
	}
}

// TestMemory searches memory and adds the session through the SDK.
func TestMemory(t *testing.T) {
	ctx := context.Background()
	p := pool(t, "adkhost/testdata/sdkguest", sandbox.Grants{
		State: true, Actions: true, Artifacts: true, Config: map[string]string{}, Memory: true,
	})
	call := func(host *adkhosttest.Host, query string) string {
		t.Helper()
		out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{Context: toolInfo(), Tool: "recall", Args: map[string]any{"query": query}}, host)
		if err != nil || out.Error != "" {
			t.Fatalf("recall: %+v, %v", out, err)
		}
		return asJSON(t, out.Result)
	}
	host := &adkhosttest.Host{Memories: []abi.MemoryEntry{
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "I drink green tea"}}}, CustomMetadata: map[string]any{"k": 1}, ID: "e1", Author: "user", Timestamp: "2026-01-02T03:04:05"},
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "my cat is Ada"}}}, CustomMetadata: map[string]any{}},
	}}
	// The result is decoded as generic JSON: keys sorted.
	want := `{"add":"OK","before":{"memories":[{"author":"user","content":{"parts":[{"text":"I drink green tea"}],"role":"user"},"custom_metadata":{"k":1},"id":"e1","timestamp":"2026-01-02T03:04:05"}]}}`
	if got := call(host, "TEA"); got != want {
		t.Errorf("recall:\n got %s\nwant %s", got, want)
	}
	if got, want := host.Recorded(), []string{"memory_search TEA", "memory_add_session"}; !slices.Equal(got, want) || host.SessionsAdded != 1 {
		t.Errorf("host calls = %q (%d sessions added), want %q", got, host.SessionsAdded, want)
	}
	if got := call(&adkhosttest.Host{NoMemory: true}, "tea"); got != `{"search":"UNAVAILABLE"}` {
		t.Errorf("recall without a memory service: %s", got)
	}
}

// TestTools covers argument decoding, results, errors and panics.
func TestTools(t *testing.T) {
	ctx := context.Background()
	p := pool(t, "adkhost/testdata/sdkguest", sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{}, Memory: true})
	call := func(tool string, args map[string]any, conf *abi.ToolConfirmation) *abi.ToolCallOutput {
		t.Helper()
		host := &adkhosttest.Host{}
		out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{Context: toolInfo(), Tool: tool, Args: args, Confirmation: conf}, host)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return out
	}
	for _, c := range []struct {
		tool    string
		args    map[string]any
		conf    *abi.ToolConfirmation
		result  string
		errText string
	}{
		{tool: "count", args: map[string]any{"n": 9007199254740990, "tags": []any{"a", "b"}, "inner": map[string]any{"flag": true}, "unknown": 1},
			result: `{"inner":true,"n":9007199254740991,"tags":2}`},
		{tool: "count", args: map[string]any{"n": "x"}, errText: "invalid arguments: json: cannot unmarshal string into Go struct field countArgs.n of type int64"},
		{tool: "count", args: map[string]any{"n": nil}, errText: `missing required argument "n"`},
		{tool: "fail", errText: "it failed"},
		{tool: "boom", errText: "panic: assignment to entry in nil map"},
		{tool: "scalar", result: `42`},
		{tool: "later", result: `null`},
		{tool: "confirm", result: `{"status":"awaiting confirmation"}`},
		{tool: "confirm", conf: &abi.ToolConfirmation{Confirmed: true}, result: `{"confirmed":true}`},
		{tool: "nope", errText: `adkhost: module sdkguest has no tool "nope"`},
	} {
		out := call(c.tool, c.args, c.conf)
		if got := asJSON(t, out.Result); got != c.result && c.errText == "" {
			t.Errorf("%s(%v) = %s, want %s", c.tool, c.args, got, c.result)
		}
		if out.Error != c.errText {
			t.Errorf("%s(%v): error %q, want %q", c.tool, c.args, out.Error, c.errText)
		}
	}
	// A recovered panic keeps the instance: the pool still has one.
	if s := p.Stats(); s.Discarded != 0 || s.Created != 1 {
		t.Errorf("pool stats after a recovered panic: %+v", s)
	}
}

// TestCallbacks runs every callback hook through the sandbox.
func TestCallbacks(t *testing.T) {
	ctx := context.Background()
	p := pool(t, "adkhost/testdata/sdkguest", sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{}, Memory: true})
	d := p.Module().Describe()
	if got, want := d.Hooks, abi.Hooks(); !slices.Equal(got, want) {
		t.Errorf("hooks = %v, want every hook %v", got, want)
	}
	host := &adkhosttest.Host{}
	text := func(s string) *abi.Content { return &abi.Content{Role: "model", Parts: []*abi.Part{{Text: s}}} }
	check := func(name string, got any, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g := asJSON(t, got); g != want {
			t.Errorf("%s:\n got %s\nwant %s", name, g, want)
		}
	}
	skipped := info
	skipped.AgentName = "skipped"
	co, err := sandbox.Invoke[abi.ContentOutput](ctx, p, abi.HookBeforeAgent, &abi.AgentInput{Context: skipped}, host)
	check("before_agent skipped", co, err, `{"abiVersion":1,"content":{"role":"model","parts":[{"text":"skipped by before_agent"}]}}`)
	co, err = sandbox.Invoke[abi.ContentOutput](ctx, p, abi.HookBeforeAgent, &abi.AgentInput{Context: info}, host)
	check("before_agent", co, err, `{"abiVersion":1}`)
	co, err = sandbox.Invoke[abi.ContentOutput](ctx, p, abi.HookAfterAgent, &abi.AgentInput{Context: info}, host)
	check("after_agent", co, err, `{"abiVersion":1}`)

	mo, err := sandbox.Invoke[abi.ModelOutput](ctx, p, abi.HookBeforeModel, &abi.BeforeModelInput{Context: info, Request: &abi.LlmRequest{Model: "canned"}}, host)
	check("before_model canned", mo, err, `{"abiVersion":1,"response":{"content":{"role":"model","parts":[{"text":"canned answer"}]}}}`)
	mo, err = sandbox.Invoke[abi.ModelOutput](ctx, p, abi.HookBeforeModel, &abi.BeforeModelInput{Context: info, Request: &abi.LlmRequest{Model: "gemini"}}, host)
	check("before_model", mo, err, `{"abiVersion":1,"request":{"model":"GEMINI"}}`)
	mo, err = sandbox.Invoke[abi.ModelOutput](ctx, p, abi.HookAfterModel, &abi.AfterModelInput{Context: info, Response: &abi.LlmResponse{Content: text("hi")}}, host)
	check("after_model", mo, err, `{"abiVersion":1,"response":{"content":{"role":"model","parts":[{"text":"hi [checked]"}]}}}`)
	mo, err = sandbox.Invoke[abi.ModelOutput](ctx, p, abi.HookOnModelError, &abi.ModelErrorInput{Context: info, Request: &abi.LlmRequest{}, Error: "quota"}, host)
	check("on_model_error", mo, err, `{"abiVersion":1,"response":{"content":{"role":"model","parts":[{"text":"fallback: quota"}]}}}`)

	tool := func(name string) abi.ToolInfo { return abi.ToolInfo{Name: name} }
	bo, err := sandbox.Invoke[abi.BeforeToolOutput](ctx, p, abi.HookBeforeTool, &abi.BeforeToolInput{Context: toolInfo(), Tool: tool("blocked"), Args: map[string]any{"x": 1}}, host)
	if err != nil || bo.Result == nil || len(bo.Result) != 0 || bo.Args != nil {
		// abi.BeforeToolOutput's omitempty would drop an empty map; the SDK
		// sends {} so that the host sees a non-nil result: skip the tool.
		t.Errorf("before_tool blocked = %+v, %v; want an empty, non-nil result", bo, err)
	}
	bo, err = sandbox.Invoke[abi.BeforeToolOutput](ctx, p, abi.HookBeforeTool, &abi.BeforeToolInput{Context: toolInfo(), Tool: tool("double"), Args: map[string]any{"x": 21}}, host)
	check("before_tool double", bo, err, `{"abiVersion":1,"args":{"x":42}}`)
	bo, err = sandbox.Invoke[abi.BeforeToolOutput](ctx, p, abi.HookBeforeTool, &abi.BeforeToolInput{Context: toolInfo(), Tool: tool("other"), Args: map[string]any{"x": 21}}, host)
	check("before_tool unchanged", bo, err, `{"abiVersion":1}`)
	to, err := sandbox.Invoke[abi.ToolOutput](ctx, p, abi.HookAfterTool, &abi.AfterToolInput{Context: toolInfo(), Tool: tool("t"), Args: map[string]any{}, Result: map[string]any{"v": 1}}, host)
	check("after_tool", to, err, `{"abiVersion":1,"result":{"seen":"t","v":1}}`)
	to, err = sandbox.Invoke[abi.ToolOutput](ctx, p, abi.HookOnToolError, &abi.ToolErrorInput{Context: toolInfo(), Tool: tool("t"), Args: map[string]any{}, Error: "disk full"}, host)
	check("on_tool_error", to, err, `{"abiVersion":1,"result":{"recovered":"disk full"}}`)

	uo, err := sandbox.Invoke[abi.UserMessageOutput](ctx, p, abi.HookOnUserMessage, &abi.UserMessageInput{Context: info, Message: text("hello")}, host)
	check("on_user_message", uo, err, `{"abiVersion":1,"message":{"role":"model","parts":[{"text":"HELLO"}]}}`)
	co, err = sandbox.Invoke[abi.ContentOutput](ctx, p, abi.HookBeforeRun, &abi.RunInput{Context: info}, host)
	check("before_run", co, err, `{"abiVersion":1}`)
	eo, err := sandbox.Invoke[abi.EventOutput](ctx, p, abi.HookOnEvent, &abi.EventInput{Context: info, Event: &abi.Event{ID: "ev1", Author: "root"}}, host)
	check("on_event", eo, err, `{"abiVersion":1,"event":{"customMetadata":{"plugin":"sdkguest"},"id":"ev1","invocationId":"","author":"root","actions":{},"timestamp":0}}`)
	ro, err := sandbox.Invoke[abi.AfterRunOutput](ctx, p, abi.HookAfterRun, &abi.RunInput{Context: info}, host)
	check("after_run", ro, err, `{"abiVersion":1}`)
	failing := info
	failing.InvocationID = "fail"
	ro, err = sandbox.Invoke[abi.AfterRunOutput](ctx, p, abi.HookAfterRun, &abi.RunInput{Context: failing}, host)
	check("after_run failing", ro, err, `{"abiVersion":1,"error":"after_run refused"}`)

	no, err := sandbox.Invoke[abi.NotifyOutput](ctx, p, abi.HookOnAgentError, &abi.AgentErrorInput{Context: info, Error: "ValueError: boom"}, host)
	check("on_agent_error", no, err, `{"abiVersion":1}`)
	no, err = sandbox.Invoke[abi.NotifyOutput](ctx, p, abi.HookOnRunError, &abi.RunErrorInput{Context: info, Error: "quota"}, host)
	check("on_run_error", no, err, `{"abiVersion":1}`)
	no, err = sandbox.Invoke[abi.NotifyOutput](ctx, p, abi.HookOnRunError, &abi.RunErrorInput{Context: info, Error: "panic"}, host)
	if err != nil || no.Error != "panic: told to panic" {
		t.Errorf("on_run_error panicking = %+v, %v; want the panic as the output's error", no, err)
	}
	logs := host.LogLines()
	if want := []string{"WARN agent " + info.AgentName + " failed: ValueError: boom", "WARN run " + info.InvocationID + " failed: quota"}; len(logs) < 2 || !slices.Equal(logs[:2], want) {
		t.Errorf("logs = %q, want %q first", logs, want)
	}

	if got, want := host.Recorded(), []string{"state_set temp:after_agent true", "transfer_to_agent specialist"}; !slices.Equal(got, want) {
		t.Errorf("host calls = %q, want %q", got, want)
	}
}

// TestLoadWithoutModuleName: the describe message has no error field, so
// the SDK traps; the host refuses the module and quotes the reason.
func TestLoadWithoutModuleName(t *testing.T) {
	_, err := runtimeFor(t).Load(context.Background(), guest(t, "adkhost/testdata/noname"))
	if !errors.Is(err, sandbox.ErrDescribe) || !strings.Contains(err.Error(), "call adkhost.Module(name, version, capabilities...) in an init function") {
		t.Errorf("Load = %v, want ErrDescribe quoting the SDK's message", err)
	}
	t.Log(err)
}

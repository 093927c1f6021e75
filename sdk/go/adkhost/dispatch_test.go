//go:build !wasip1

package adkhost

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
)

var ctxInfo = abi.InvocationInfo{AppName: "app", UserID: "u", SessionID: "s", InvocationID: "e-1", AgentName: "root", FunctionCallID: "fc-1"}

// invoke encodes in, runs the hook through Handle, and decodes the output
// strictly as the host does (an empty output is the zero message).
func invoke[Out any, PO interface {
	*Out
	abi.Message
}](t *testing.T, h abi.Hook, in abi.Message) *Out {
	t.Helper()
	b, err := abi.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	raw := Handle(h, b)
	out := new(Out)
	if len(raw) == 0 {
		PO(out).ABIHeader().ABIVersion = abi.Version
		return out
	}
	if string(raw) == `{"abiVersion":1}` {
		t.Errorf("%s: an output with every field absent must be sent as zero bytes", h)
	}
	if err := abi.Decode(raw, PO(out), 0); err != nil {
		t.Fatalf("%s: the host would refuse the output %s: %v", h, raw, err)
	}
	return out
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolCall(t *testing.T) {
	h := fresh(t)
	Module("m", "", abi.CapState)
	var seen ToolContext
	Tool("greet", "Greets.", func(ctx ToolContext, a greetArgs) (greeting, error) {
		seen = ctx
		if err := ctx.State().Set("temp:greeted", a.Name); err != nil {
			return greeting{}, err
		}
		return greet(ctx, a)
	})
	Tool("big", "", func(_ ToolContext, a struct {
		N uint64 `json:"n"`
	}) (uint64, error) {
		return a.N, nil
	})
	Tool("nothing", "", func(ToolContext, struct{}) (map[string]any, error) { return nil, nil }, LongRunning())
	Tool("empty", "", func(ToolContext, struct{}) (map[string]any, error) { return map[string]any{}, nil })
	Tool("fails", "", func(ToolContext, struct{}) (any, error) { return "ignored", errors.New("no luck") })
	Tool("panics", "", func(ToolContext, struct{}) (any, error) { panic("oh no") })
	Tool("silent", "", func(ToolContext, struct{}) (any, error) { return nil, errors.New("") })

	conf := &abi.ToolConfirmation{Hint: "ok?", Confirmed: true}
	out := invoke[abi.ToolCallOutput](t, abi.HookToolCall, &abi.ToolCallInput{Context: ctxInfo, Tool: "greet", Args: map[string]any{"name": "Ada"}, Confirmation: conf})
	if js(t, out) != `{"abiVersion":1,"result":{"text":"Hello, Ada"}}` {
		t.Errorf("greet = %s", js(t, out))
	}
	if seen.Tool != (abi.ToolInfo{Name: "greet", Description: "Greets."}) || seen.FunctionCallID() != "fc-1" ||
		seen.Invocation != ctxInfo || seen.Confirmation == nil || !seen.Confirmation.Confirmed || seen.Hook != abi.HookToolCall {
		t.Errorf("tool context = %+v", seen)
	}
	if got := h.Recorded(); !slices.Equal(got, []string{`state_set temp:greeted "Ada"`}) {
		t.Errorf("host calls = %q", got)
	}

	// Arguments are decoded from the raw JSON: no float64 detour.
	raw := []byte(`{"abiVersion":1,"context":{},"tool":"big","args":{"n":18446744073709551615},"newField":true}`)
	if got := string(Handle(abi.HookToolCall, raw)); got != `{"abiVersion":1,"result":18446744073709551615}` {
		t.Errorf("big = %s", got)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"nothing", nil, `{"abiVersion":1}`},
		{"empty", nil, `{"abiVersion":1,"result":{}}`},
		{"fails", nil, `{"abiVersion":1,"error":"no luck"}`},
		{"panics", nil, `{"abiVersion":1,"error":"panic: oh no"}`},
		{"silent", nil, `{"abiVersion":1,"error":"failed"}`},
		{"greet", map[string]any{"name": nil}, `{"abiVersion":1,"error":"missing required argument \"name\""}`},
		{"greet", map[string]any{}, `{"abiVersion":1,"error":"missing required argument \"name\""}`},
		{"greet", map[string]any{"name": 3}, `{"abiVersion":1,"error":"invalid arguments: json: cannot unmarshal number into Go struct field greetArgs.name of type string"}`},
		// A missing argument is reported before a bad one, with or without
		// the plan.
		{"greet", map[string]any{"formal": "yes"}, `{"abiVersion":1,"error":"missing required argument \"name\""}`},
		{"greet", map[string]any{"formal": true, "name": "Ada"}, `{"abiVersion":1,"result":{"text":"Hello, Ada"}}`},
		{"missing", nil, `{"abiVersion":1,"error":"adkhost: module m has no tool \"missing\""}`},
	} {
		out := invoke[abi.ToolCallOutput](t, abi.HookToolCall, &abi.ToolCallInput{Context: ctxInfo, Tool: c.tool, Args: c.args})
		if got := js(t, out); got != c.want {
			t.Errorf("%s(%v) = %s, want %s", c.tool, c.args, got, c.want)
		}
	}
	if logs := h.LogLines(); len(logs) != 1 || !strings.HasPrefix(logs[0], "ERROR adkhost: tool_call panicked: oh no\ngoroutine") {
		t.Errorf("a panic logs its stack: %q", logs)
	}
}

// The exports build every output in the array of the previous one: the
// bytes must be those of Handle whatever the buffer held, with a nil
// result, an error and a callback's output among them.
func TestHandleReusesBuffer(t *testing.T) {
	fresh(t)
	Module("m", "")
	Tool("echo", "Echoes.", func(_ ToolContext, a greetArgs) (*greeting, error) {
		if a.Name == "" {
			return nil, nil
		}
		return &greeting{Text: "hi " + a.Name}, nil
	})
	AfterAgent(func(CallbackContext) (*abi.Content, error) {
		return &abi.Content{Role: "model", Parts: []*abi.Part{{Text: "bye"}}}, nil
	})
	call := func(name string) []byte {
		b, err := abi.Encode(&abi.ToolCallInput{Context: ctxInfo, Tool: "echo", Args: map[string]any{"name": name}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	agent, _ := abi.Encode(&abi.AgentInput{Context: ctxInfo})
	buf := []byte(strings.Repeat("garbage ", 64))
	for _, c := range []struct {
		hook  abi.Hook
		input []byte
	}{
		{abi.HookToolCall, call("a rather long name, longer than the next")},
		{abi.HookToolCall, call("Bo")},
		{abi.HookToolCall, call("")},
		{abi.HookToolCall, nil},
		{abi.HookAfterAgent, agent},
		{abi.HookToolCall, call("Al")},
	} {
		want := Handle(c.hook, c.input)
		got := std.handle(buf, c.hook, c.input)
		if string(got) != string(want) {
			t.Errorf("%s %s: got %q, want %q", c.hook, c.input, got, want)
		}
		if len(got) > 0 {
			buf = got
		}
	}
}

func TestBadInput(t *testing.T) {
	fresh(t)
	Module("m", "")
	AfterRun(func(CallbackContext) error { return nil })
	for _, c := range []struct {
		hook  abi.Hook
		input string
		want  string
	}{
		{abi.HookAfterRun, `{"abiVersion":2,"context":{}}`, "adkhost: input has abiVersion 2; this SDK speaks 1"},
		{abi.HookAfterRun, `{"context":{}}`, "adkhost: input has abiVersion 0; this SDK speaks 1"},
		{abi.HookAfterRun, `[1]`, "adkhost: bad input: json: cannot unmarshal array into Go value of type abi.RunInput"},
		{abi.HookAfterRun, ``, "adkhost: empty input"},
		{abi.HookBeforeModel, `{"abiVersion":1}`, "adkhost: hook before_model is not registered in this module"},
		{"later_hook", `{"abiVersion":1}`, `adkhost: unknown hook "later_hook"`},
	} {
		var out errorOutput
		if err := json.Unmarshal(Handle(c.hook, []byte(c.input)), &out); err != nil || out.Error != c.want {
			t.Errorf("%s %q: error %q (%v), want %q", c.hook, c.input, out.Error, err, c.want)
		}
	}
	// Unknown input fields are ignored (ABI.md §6: decode leniently).
	if out := Handle(abi.HookAfterRun, []byte(`{"abiVersion":1,"context":{"appName":"a","future":1},"future":{}}`)); out != nil {
		t.Errorf("lenient decoding: %s", out)
	}
}

func TestCallbackChains(t *testing.T) {
	fresh(t)
	Module("m", "")
	var order []string
	BeforeModel(func(_ CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		order = append(order, "first")
		req.Model += "-edited"
		return nil, nil
	})
	BeforeModel(func(_ CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		order = append(order, "second:"+req.Model)
		if req.Model == "stop-edited" {
			return &abi.LlmResponse{ErrorMessage: "stopped"}, nil
		}
		if req.Model == "fail-edited" {
			return nil, errors.New("refused")
		}
		return nil, nil
	})
	BeforeModel(func(_ CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		order = append(order, "third")
		return nil, nil
	})
	for _, c := range []struct{ model, want, order string }{
		{"m", `{"abiVersion":1,"request":{"model":"m-edited"}}`, "first second:m-edited third"},
		{"stop", `{"abiVersion":1,"response":{"errorMessage":"stopped"},"request":{"model":"stop-edited"}}`, "first second:stop-edited"},
		{"fail", `{"abiVersion":1,"error":"refused"}`, "first second:fail-edited"},
	} {
		order = nil
		out := invoke[abi.ModelOutput](t, abi.HookBeforeModel, &abi.BeforeModelInput{Context: ctxInfo, Request: &abi.LlmRequest{Model: c.model}})
		if got := js(t, out); got != c.want || strings.Join(order, " ") != c.order {
			t.Errorf("model %s: %s after %q, want %s after %q", c.model, got, order, c.want, c.order)
		}
	}
}

func TestEveryHook(t *testing.T) {
	h := fresh(t)
	Module("m", "", abi.CapActions)
	content := func(s string) *abi.Content { return &abi.Content{Role: "model", Parts: []*abi.Part{{Text: s}}} }
	var hooks []abi.Hook
	note := func(ctx CallbackContext) { hooks = append(hooks, ctx.Hook) }
	BeforeAgent(func(ctx CallbackContext) (*abi.Content, error) { note(ctx); return content("ba"), nil })
	AfterAgent(func(ctx CallbackContext) (*abi.Content, error) { note(ctx); return nil, ctx.Actions().Escalate() })
	BeforeRun(func(ctx CallbackContext) (*abi.Content, error) { note(ctx); return content("br"), nil })
	AfterModel(func(ctx CallbackContext, r *abi.LlmResponse) (*abi.LlmResponse, error) {
		note(ctx)
		return &abi.LlmResponse{ModelVersion: r.ModelVersion + "+"}, nil
	})
	OnModelError(func(ctx CallbackContext, req *abi.LlmRequest, err error) (*abi.LlmResponse, error) {
		note(ctx)
		return &abi.LlmResponse{ErrorMessage: req.Model + ": " + err.Error()}, nil
	})
	BeforeTool(func(ctx ToolContext, args map[string]any) (map[string]any, error) {
		note(ctx.CallbackContext)
		if ctx.Tool.Name == "edit" {
			delete(args, "secret")
			return nil, nil
		}
		return nil, ctx.Actions().SkipSummarization()
	})
	AfterTool(func(ctx ToolContext, args, result map[string]any) (map[string]any, error) {
		note(ctx.CallbackContext)
		if ctx.Tool.Name == "clear" {
			clear(result) // edited in place to {}: still sent
		}
		return nil, nil
	})
	OnToolError(func(ctx ToolContext, args map[string]any, err error) (map[string]any, error) {
		note(ctx.CallbackContext)
		return nil, errors.New("still failing: " + err.Error())
	})
	OnUserMessage(func(ctx CallbackContext, m *abi.Content) (*abi.Content, error) {
		note(ctx)
		return content("replaced"), nil
	})
	OnEvent(func(ctx CallbackContext, ev *abi.Event) (*abi.Event, error) { note(ctx); return nil, nil })
	AfterRun(func(ctx CallbackContext) error { note(ctx); return nil })
	var told []string
	tell := func(ctx CallbackContext, err error) {
		note(ctx)
		told = append(told, string(ctx.Hook)+" "+ctx.Invocation.AgentName+": "+err.Error())
	}
	// Notifications: every registration runs, and the output is empty.
	OnAgentError(tell)
	OnAgentError(tell)
	OnRunError(tell)

	ti := abi.ToolInfo{Name: "t"}
	for _, c := range []struct {
		hook abi.Hook
		got  func() any
		want string
	}{
		{abi.HookBeforeAgent, func() any {
			return invoke[abi.ContentOutput](t, abi.HookBeforeAgent, &abi.AgentInput{Context: ctxInfo})
		},
			`{"abiVersion":1,"content":{"role":"model","parts":[{"text":"ba"}]}}`},
		{abi.HookAfterAgent, func() any { return invoke[abi.ContentOutput](t, abi.HookAfterAgent, &abi.AgentInput{Context: ctxInfo}) }, `{"abiVersion":1}`},
		{abi.HookBeforeRun, func() any { return invoke[abi.ContentOutput](t, abi.HookBeforeRun, &abi.RunInput{Context: ctxInfo}) },
			`{"abiVersion":1,"content":{"role":"model","parts":[{"text":"br"}]}}`},
		{abi.HookAfterModel, func() any {
			return invoke[abi.ModelOutput](t, abi.HookAfterModel, &abi.AfterModelInput{Context: ctxInfo, Response: &abi.LlmResponse{ModelVersion: "v1"}})
		}, `{"abiVersion":1,"response":{"modelVersion":"v1+"}}`},
		{abi.HookOnModelError, func() any {
			return invoke[abi.ModelOutput](t, abi.HookOnModelError, &abi.ModelErrorInput{Context: ctxInfo, Request: &abi.LlmRequest{Model: "g"}, Error: "429"})
		}, `{"abiVersion":1,"response":{"errorMessage":"g: 429"}}`},
		{abi.HookBeforeTool, func() any {
			return invoke[abi.BeforeToolOutput](t, abi.HookBeforeTool, &abi.BeforeToolInput{Context: ctxInfo, Tool: abi.ToolInfo{Name: "edit"}, Args: map[string]any{"secret": 1, "q": "x"}})
		}, `{"abiVersion":1,"args":{"q":"x"}}`},
		{abi.HookBeforeTool, func() any {
			return invoke[abi.BeforeToolOutput](t, abi.HookBeforeTool, &abi.BeforeToolInput{Context: ctxInfo, Tool: ti})
		}, `{"abiVersion":1}`},
		{abi.HookAfterTool, func() any {
			return invoke[abi.ToolOutput](t, abi.HookAfterTool, &abi.AfterToolInput{Context: ctxInfo, Tool: ti, Result: map[string]any{"a": 1}})
		}, `{"abiVersion":1}`},
		{abi.HookOnToolError, func() any {
			return invoke[abi.ToolOutput](t, abi.HookOnToolError, &abi.ToolErrorInput{Context: ctxInfo, Tool: ti, Error: "boom"})
		}, `{"abiVersion":1,"error":"still failing: boom"}`},
		{abi.HookOnUserMessage, func() any {
			return invoke[abi.UserMessageOutput](t, abi.HookOnUserMessage, &abi.UserMessageInput{Context: ctxInfo, Message: content("hi")})
		}, `{"abiVersion":1,"message":{"role":"model","parts":[{"text":"replaced"}]}}`},
		{abi.HookOnEvent, func() any {
			return invoke[abi.EventOutput](t, abi.HookOnEvent, &abi.EventInput{Context: ctxInfo, Event: &abi.Event{ID: "e"}})
		}, `{"abiVersion":1}`},
		{abi.HookAfterRun, func() any { return invoke[abi.AfterRunOutput](t, abi.HookAfterRun, &abi.RunInput{Context: ctxInfo}) }, `{"abiVersion":1}`},
		{abi.HookOnAgentError, func() any {
			return invoke[abi.NotifyOutput](t, abi.HookOnAgentError, &abi.AgentErrorInput{Context: ctxInfo, Error: "ValueError: agent broke"})
		}, `{"abiVersion":1}`},
		{abi.HookOnRunError, func() any {
			return invoke[abi.NotifyOutput](t, abi.HookOnRunError, &abi.RunErrorInput{Context: ctxInfo, Error: "run broke"})
		}, `{"abiVersion":1}`},
	} {
		if got := js(t, c.got()); got != c.want {
			t.Errorf("%s = %s, want %s", c.hook, got, c.want)
		}
	}
	// A result edited in place to {} is a replacement, sent as {}.
	b, _ := abi.Encode(&abi.AfterToolInput{Context: ctxInfo, Tool: abi.ToolInfo{Name: "clear"}, Result: map[string]any{"a": 1}})
	if got := string(Handle(abi.HookAfterTool, b)); got != `{"abiVersion":1,"result":{}}` {
		t.Errorf("after_tool cleared = %s", got)
	}
	want := []abi.Hook{abi.HookBeforeAgent, abi.HookAfterAgent, abi.HookBeforeRun, abi.HookAfterModel, abi.HookOnModelError,
		abi.HookBeforeTool, abi.HookBeforeTool, abi.HookAfterTool, abi.HookOnToolError, abi.HookOnUserMessage, abi.HookOnEvent, abi.HookAfterRun,
		abi.HookOnAgentError, abi.HookOnAgentError, abi.HookOnRunError, abi.HookAfterTool}
	if !slices.Equal(hooks, want) {
		t.Errorf("hooks seen %v, want %v", hooks, want)
	}
	agent := ctxInfo.AgentName
	if want := []string{"on_agent_error " + agent + ": ValueError: agent broke", "on_agent_error " + agent + ": ValueError: agent broke", "on_run_error " + agent + ": run broke"}; !slices.Equal(told, want) {
		t.Errorf("told %q, want %q", told, want)
	}
	if got := h.Recorded(); !slices.Equal(got, []string{"escalate", "skip_summarization"}) {
		t.Errorf("host calls = %q", got)
	}
}

// The SDK's own output types must be what the host decodes strictly into
// abi's: same field names, nothing more.
func TestOutputTypesMatchABI(t *testing.T) {
	for _, c := range []struct {
		m    abi.Message
		into abi.Message
	}{
		{&toolOutput{Result: json.RawMessage(`{}`), Error: "e"}, &abi.ToolOutput{}},
		{&beforeToolOutput{Result: json.RawMessage(`{}`), Args: json.RawMessage(`{"a":1}`), Error: "e"}, &abi.BeforeToolOutput{}},
	} {
		b, err := abi.Encode(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if err := abi.Decode(b, c.into, 0); err != nil {
			t.Errorf("%T: %v", c.m, err)
		}
	}
	for _, h := range abi.Hooks() {
		b, _ := abi.Encode(&errorOutput{Error: "x"})
		if err := abi.Decode(b, h.NewOutput(), 0); err != nil {
			t.Errorf("an error output for %s: %v", h, err)
		}
	}
	// toolCallInput reads everything abi.ToolCallInput carries.
	b, _ := abi.Encode(&abi.ToolCallInput{Context: ctxInfo, Tool: "t", Args: map[string]any{"a": 1}, Confirmation: &abi.ToolConfirmation{Hint: "h"}})
	var in toolCallInput
	if err := abi.Decode(b, &in, 0); err != nil {
		t.Errorf("toolCallInput: %v", err)
	}
}

// TestBeforeToolConfirmation: a before_tool callback sees the user's
// answer to the call's confirmation request, as google-adk's
// tool_context.tool_confirmation.
func TestBeforeToolConfirmation(t *testing.T) {
	fresh(t)
	Module("m", "")
	var got []*abi.ToolConfirmation
	BeforeTool(func(ctx ToolContext, args map[string]any) (map[string]any, error) {
		got = append(got, ctx.Confirmation)
		return nil, nil
	})
	invoke[abi.BeforeToolOutput](t, abi.HookBeforeTool, &abi.BeforeToolInput{Context: ctxInfo, Tool: abi.ToolInfo{Name: "t"},
		Confirmation: &abi.ToolConfirmation{Hint: "ok?", Confirmed: true}})
	invoke[abi.BeforeToolOutput](t, abi.HookBeforeTool, &abi.BeforeToolInput{Context: ctxInfo, Tool: abi.ToolInfo{Name: "t"}})
	if len(got) != 2 || got[0] == nil || !got[0].Confirmed || got[0].Hint != "ok?" || got[1] != nil {
		t.Fatalf("confirmations seen = %+v", got)
	}
}

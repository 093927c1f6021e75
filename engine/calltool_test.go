package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestCallToolRunsThePipelineAndStoresTheCall(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	counter := newTool(t, "count", objParams("by"), func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
		n, _ := ctx.State().Get("n")
		f, _ := n.(float64)
		f += float64(len(args["by"].(string)))
		ctx.State().Set("n", f)
		return f, nil
	})
	failing := newTool(t, "fail", nil, func(callbacks.ToolContext, map[string]any) (any, error) {
		return nil, errors.New("boom")
	})
	gated, err := tool.NewFunction(tool.FunctionConfig{Name: "gated", RequireConfirmation: true,
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) { return "ran", nil }})
	if err != nil {
		t.Fatal(err)
	}
	sub := newLlm(t, engine.LlmAgentConfig{Name: "helper", Tools: []tool.Tool{counter, failing, gated},
		AfterTool: []callbacks.AfterTool{func(ctx callbacks.ToolContext, tl callbacks.Tool, args, result map[string]any) (map[string]any, error) {
			log.add("agent.after_tool " + tl.Name())
			return nil, nil
		}}})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", SubAgents: []engine.Agent{sub}})
	plugin := &testPlugin{name: "p", log: log}
	r, svc := mustRunner(t, root, plugin)
	ctx := context.Background()
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	call := engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "helper", Tool: "count", Args: map[string]any{"by": "abc"}, CustomMetadata: map[string]any{"via": "test"}}
	res, err := r.CallTool(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "response", res.Response, `{"result":3}`)
	wantEvents(t, "events", res.Events,
		`{"author":"helper","content":{"parts":[{"functionCall":{"id":"adk-*","name":"count","args":{"by":"abc"}}}],"role":"model"},"customMetadata":{"via":"test"}}`,
		`{"author":"helper","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"count","response":{"result":3}}}],"role":"user"},"actions":{"stateDelta":{"n":3}},"customMetadata":{"via":"test"}}`)
	if res.Events[0].InvocationID != res.InvocationID || res.Events[1].InvocationID != res.InvocationID {
		t.Errorf("events are not of invocation %s", res.InvocationID)
	}
	// The state persists: a second call reads it.
	call.Args = map[string]any{"by": "xy"}
	if res, err = r.CallTool(ctx, call); err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "second response", res.Response, `{"result":5}`)
	s := loadSession(t, svc, "s")
	if len(s.Events()) != 4 || jsonOf(s.State()) != `{"n":5}` {
		t.Errorf("session: %d events, state %s; want 4 events, state {\"n\":5}", len(s.Events()), jsonOf(s.State()))
	}
	if log.count("p.before_tool") != 2 || log.count("agent.after_tool count") != 2 || log.count("p.on_event") != 4 {
		t.Errorf("hooks: %v", log.get())
	}

	// A failure is a *ToolError and stores nothing.
	_, err = r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "helper", Tool: "fail"})
	var te *engine.ToolError
	if !errors.As(err, &te) || te.Tool != "fail" {
		t.Errorf("failing tool: err = %v, want a *ToolError", err)
	}
	_, err = r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "helper", Tool: "gated"})
	var ce *engine.ConfirmationRequiredError
	if !errors.As(err, &ce) || ce.Tool != "gated" {
		t.Errorf("gated tool: err = %v, want a *ConfirmationRequiredError", err)
	}
	_, err = r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "helper", Tool: "nope"})
	var nf *engine.ToolNotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("unknown tool: err = %v, want a *ToolNotFoundError", err)
	}
	if _, err = r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "ghost", Tool: "count"}); !errors.Is(err, engine.ErrAgentNotFound) {
		t.Errorf("unknown agent: err = %v, want ErrAgentNotFound", err)
	}
	if _, err = r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "missing", Agent: "helper", Tool: "count", Args: map[string]any{"by": "a"}}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("missing session: err = %v, want session.ErrNotFound", err)
	}
	if n := len(loadSession(t, svc, "s").Events()); n != 4 {
		t.Errorf("failed calls stored events: %d events, want 4", n)
	}
}

// A direct tool call (an MCP client's) is bounded as a run is: its result
// counted against RunConfig.MaxBytes as it arrives; past the bound
// nothing of the call is stored.
func TestCallToolMaxBytes(t *testing.T) {
	t.Parallel()
	big := newTool(t, "big", nil, func(callbacks.ToolContext, map[string]any) (any, error) {
		return map[string]any{"data": strings.Repeat("x", 64<<10)}, nil
	})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Tools: []tool.Tool{big}})
	r, svc := mustRunner(t, root)
	ctx := context.Background()
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	_, err := r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "root", Tool: "big", Limits: engine.RunConfig{MaxBytes: 32 << 10}})
	var be *engine.BytesLimitExceededError
	if !errors.As(err, &be) || be.Limit != 32<<10 || !strings.Contains(be.What, `tool "big"`) {
		t.Fatalf("err = %v, want a BytesLimitExceededError of 32 KiB", err)
	}
	if n := len(loadSession(t, svc, "s").Events()); n != 0 {
		t.Errorf("stored %d events of the refused call", n)
	}
	if _, err := r.CallTool(ctx, engine.DirectToolCall{UserID: "u", SessionID: "s", Agent: "root", Tool: "big"}); err != nil {
		t.Errorf("within the default bound: %v", err)
	}
}

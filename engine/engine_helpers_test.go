package engine_test

// Shared helpers for the engine_*_test.go files: agent and tool builders, a
// configurable recording plugin, and JSON views of events and requests that
// leave out what is random (event ids, invocation ids, timestamps, "adk-"
// call ids).

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// Text of the identity instruction of an agent without description.
func identity(name string) string {
	return `You are an agent. Your internal name is "` + name + `".`
}

func newLlm(t *testing.T, cfg engine.LlmAgentConfig) *engine.LlmAgent {
	t.Helper()
	a, err := engine.NewLlmAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newSeq(t *testing.T, name string, subs ...engine.Agent) *engine.SequentialAgent {
	t.Helper()
	a, err := engine.NewSequentialAgent(engine.AgentInfo{Name: name, SubAgents: subs})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type toolFn = func(ctx callbacks.ToolContext, args map[string]any) (any, error)

// newTool returns a function tool; params nil means no parameters.
func newTool(t *testing.T, name string, params map[string]any, fn toolFn) tool.Tool {
	t.Helper()
	f, err := tool.NewFunction(tool.FunctionConfig{Name: name, Description: name + " tool.", Parameters: params, Fn: fn})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func newLongTool(t *testing.T, name string, fn toolFn) tool.Tool {
	t.Helper()
	f, err := tool.NewFunction(tool.FunctionConfig{Name: name, Description: name + " tool.", LongRunning: true, Fn: fn})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// objParams is a JSON schema object with string properties, all required.
func objParams(names ...string) map[string]any {
	props := map[string]any{}
	req := []any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "string"}
		req = append(req, n)
	}
	return map[string]any{"type": "object", "properties": props, "required": req}
}

func fcall(name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{Name: name, Args: args}
}

func fcallID(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

func transferCall(target string) *genai.FunctionCall {
	return fcall("transfer_to_agent", map[string]any{"agent_name": target})
}

func userFuncResponse(id, name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: resp}}}}
}

func loadSession(t *testing.T, svc session.Service, sid string) *session.Session {
	t.Helper()
	s, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustRun runs a turn that must succeed.
func mustRun(t *testing.T, r *engine.Runner, svc session.Service, sid string, msg *genai.Content, cfg engine.RunConfig) []*session.Event {
	t.Helper()
	evs, err := run(t, r, svc, sid, msg, cfg)
	if err != nil {
		t.Fatalf("run: %v (events so far: %s)", err, eventsJSON(evs))
	}
	return evs
}

var adkID = regexp.MustCompile(`"adk-[0-9a-f-]{36}"`)

// canonJSON re-encodes JSON text with sorted keys, so literals in tests can
// be written in any key order and spacing.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// evView is an event's JSON without id, invocation id and timestamp, with
// empty actions left out and generated "adk-" call ids replaced by "adk-*".
func evView(ev *session.Event) string {
	b, err := json.Marshal(ev)
	if err != nil {
		return "marshal error: " + err.Error()
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "id")
	delete(m, "invocationId")
	delete(m, "timestamp")
	// Node paths are checked precisely by the conformance goldens.
	delete(m, "nodeInfo")
	if a, ok := m["actions"].(map[string]any); ok && len(a) == 0 {
		delete(m, "actions")
	}
	b, _ = json.Marshal(m)
	return adkID.ReplaceAllString(string(b), `"adk-*"`)
}

func eventsJSON(evs []*session.Event) string {
	var lines []string
	for _, ev := range evs {
		lines = append(lines, evView(ev))
	}
	return "\n  " + strings.Join(lines, "\n  ")
}

// wantEvents compares events with JSON literals (see evView).
func wantEvents(t *testing.T, what string, got []*session.Event, want ...string) {
	t.Helper()
	ok := len(got) == len(want)
	if ok {
		for i, w := range want {
			if evView(got[i]) != canonJSON(t, w) {
				ok = false
				break
			}
		}
	}
	if !ok {
		var ws []string
		for _, w := range want {
			ws = append(ws, canonJSON(t, w))
		}
		t.Errorf("%s:\ngot  %d:%s\nwant %d:%s", what, len(got), eventsJSON(got), len(want), "\n  "+strings.Join(ws, "\n  "))
	}
}

// wantJSON compares the JSON of got with a literal, ids normalized.
func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	g := adkID.ReplaceAllString(canonJSON(t, string(b)), `"adk-*"`)
	if w := canonJSON(t, want); g != w {
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// hookLog records hook calls from any goroutine.
type hookLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *hookLog) add(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.entries = append(l.entries, s)
	l.mu.Unlock()
}

func (l *hookLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

func (l *hookLog) count(s string) int {
	n := 0
	for _, e := range l.get() {
		if e == s {
			n++
		}
	}
	return n
}

// testPlugin logs "<name>.<hook>" for every hook and delegates to the hook
// functions that are set; unset hooks return nil.
type testPlugin struct {
	name string
	log  *hookLog

	onUserMessage func(callbacks.ReadonlyContext, *genai.Content) (*genai.Content, error)
	beforeRun     func(callbacks.ReadonlyContext) (*genai.Content, error)
	onEvent       func(callbacks.ReadonlyContext, *session.Event) (*session.Event, error)
	afterRun      func(callbacks.ReadonlyContext) error
	beforeAgent   func(callbacks.CallbackContext) (*genai.Content, error)
	afterAgent    func(callbacks.CallbackContext) (*genai.Content, error)
	beforeModel   func(callbacks.CallbackContext, *model.Request) (*model.Response, error)
	afterModel    func(callbacks.CallbackContext, *model.Response) (*model.Response, error)
	onModelError  func(callbacks.CallbackContext, *model.Request, error) (*model.Response, error)
	beforeTool    func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error)
	afterTool     func(callbacks.ToolContext, callbacks.Tool, map[string]any, map[string]any) (map[string]any, error)
	onToolError   func(callbacks.ToolContext, callbacks.Tool, map[string]any, error) (map[string]any, error)
}

var _ callbacks.Plugin = (*testPlugin)(nil)

func (p *testPlugin) Name() string { return p.name }

func (p *testPlugin) OnUserMessage(ctx callbacks.ReadonlyContext, msg *genai.Content) (*genai.Content, error) {
	p.log.add(p.name + ".on_user_message")
	if p.onUserMessage != nil {
		return p.onUserMessage(ctx, msg)
	}
	return nil, nil
}

func (p *testPlugin) BeforeRun(ctx callbacks.ReadonlyContext) (*genai.Content, error) {
	p.log.add(p.name + ".before_run")
	if p.beforeRun != nil {
		return p.beforeRun(ctx)
	}
	return nil, nil
}

func (p *testPlugin) OnEvent(ctx callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
	p.log.add(p.name + ".on_event")
	if p.onEvent != nil {
		return p.onEvent(ctx, e)
	}
	return nil, nil
}

func (p *testPlugin) AfterRun(ctx callbacks.ReadonlyContext) error {
	p.log.add(p.name + ".after_run")
	if p.afterRun != nil {
		return p.afterRun(ctx)
	}
	return nil
}

func (p *testPlugin) BeforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	p.log.add(p.name + ".before_agent")
	if p.beforeAgent != nil {
		return p.beforeAgent(ctx)
	}
	return nil, nil
}

func (p *testPlugin) AfterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	p.log.add(p.name + ".after_agent")
	if p.afterAgent != nil {
		return p.afterAgent(ctx)
	}
	return nil, nil
}

func (p *testPlugin) BeforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	p.log.add(p.name + ".before_model")
	if p.beforeModel != nil {
		return p.beforeModel(ctx, req)
	}
	return nil, nil
}

func (p *testPlugin) AfterModel(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
	p.log.add(p.name + ".after_model")
	if p.afterModel != nil {
		return p.afterModel(ctx, resp)
	}
	return nil, nil
}

func (p *testPlugin) OnModelError(ctx callbacks.CallbackContext, req *model.Request, err error) (*model.Response, error) {
	p.log.add(p.name + ".on_model_error")
	if p.onModelError != nil {
		return p.onModelError(ctx, req, err)
	}
	return nil, nil
}

func (p *testPlugin) BeforeTool(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
	p.log.add(p.name + ".before_tool")
	if p.beforeTool != nil {
		return p.beforeTool(ctx, t, args)
	}
	return nil, nil
}

func (p *testPlugin) AfterTool(ctx callbacks.ToolContext, t callbacks.Tool, args, result map[string]any) (map[string]any, error) {
	p.log.add(p.name + ".after_tool")
	if p.afterTool != nil {
		return p.afterTool(ctx, t, args, result)
	}
	return nil, nil
}

func (p *testPlugin) OnToolError(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any, err error) (map[string]any, error) {
	p.log.add(p.name + ".on_tool_error")
	if p.onToolError != nil {
		return p.onToolError(ctx, t, args, err)
	}
	return nil, nil
}

func (p *testPlugin) OnAgentError(callbacks.CallbackContext, error) {
	p.log.add(p.name + ".on_agent_error")
}

func (p *testPlugin) OnRunError(callbacks.ReadonlyContext, error) {
	p.log.add(p.name + ".on_run_error")
}

// Agent callbacks that only log "<agent>.<hook>".

func logBeforeAgent(l *hookLog, name string) callbacks.BeforeAgent {
	return func(callbacks.CallbackContext) (*genai.Content, error) {
		l.add(name + ".before_agent")
		return nil, nil
	}
}

func logAfterAgent(l *hookLog, name string) callbacks.AfterAgent {
	return func(callbacks.CallbackContext) (*genai.Content, error) { l.add(name + ".after_agent"); return nil, nil }
}

func logBeforeModel(l *hookLog, name string) callbacks.BeforeModel {
	return func(callbacks.CallbackContext, *model.Request) (*model.Response, error) {
		l.add(name + ".before_model")
		return nil, nil
	}
}

func logAfterModel(l *hookLog, name string) callbacks.AfterModel {
	return func(callbacks.CallbackContext, *model.Response) (*model.Response, error) {
		l.add(name + ".after_model")
		return nil, nil
	}
}

func logOnModelError(l *hookLog, name string) callbacks.OnModelError {
	return func(callbacks.CallbackContext, *model.Request, error) (*model.Response, error) {
		l.add(name + ".on_model_error")
		return nil, nil
	}
}

func logBeforeTool(l *hookLog, name string) callbacks.BeforeTool {
	return func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
		l.add(name + ".before_tool")
		return nil, nil
	}
}

func logAfterTool(l *hookLog, name string) callbacks.AfterTool {
	return func(callbacks.ToolContext, callbacks.Tool, map[string]any, map[string]any) (map[string]any, error) {
		l.add(name + ".after_tool")
		return nil, nil
	}
}

func logOnToolError(l *hookLog, name string) callbacks.OnToolError {
	return func(callbacks.ToolContext, callbacks.Tool, map[string]any, error) (map[string]any, error) {
		l.add(name + ".on_tool_error")
		return nil, nil
	}
}

func modelContent(s string) *genai.Content {
	return &genai.Content{Role: "model", Parts: []*genai.Part{{Text: s}}}
}

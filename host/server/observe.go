package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/host"
)

// observer is a runner plugin that turns hooks into metrics and spans, so
// the engine needs neither Prometheus nor OpenTelemetry. It is the first
// plugin of every runner: later plugins may end a chain, this one never
// does (every hook returns nil). Spans are named as google-adk names them:
// "invocation", "invoke_agent <agent>", "call_llm", "execute_tool <tool>".
type observer struct {
	callbacks.NoopPlugin
	m      *metrics
	tracer trace.Tracer // nil: no spans
	invs   sync.Map     // invocation id -> *invState

	// toolNames holds the names of tools without a module (an MCP
	// server's, built-ins, agent tools) given as label values, by app,
	// at most maxToolLabels of them.
	toolNamesMu sync.Mutex
	toolNames   map[string]bool
}

// maxToolLabels bounds the tool label values of tools without a module.
// An MCP server names its tools, and lists them again at every
// invocation: one that renamed them each time grew the tool call counter
// by a series per call, for good. Past the bound such a tool is
// "<other>".
const maxToolLabels = 1000

// toolLabel is the tool label value of a tool without a module.
func (o *observer) toolLabel(app, name string) string {
	key := app + "\x00" + name
	o.toolNamesMu.Lock()
	defer o.toolNamesMu.Unlock()
	if !o.toolNames[key] {
		if len(o.toolNames) >= maxToolLabels {
			return "<other>"
		}
		if o.toolNames == nil {
			o.toolNames = map[string]bool{}
		}
		o.toolNames[key] = true
	}
	return name
}

// forgetApp drops a deleted app's metrics and its tool label values,
// which counted against maxToolLabels.
func (o *observer) forgetApp(app string) {
	o.m.forgetApp(app)
	prefix := app + "\x00"
	o.toolNamesMu.Lock()
	defer o.toolNamesMu.Unlock()
	for k := range o.toolNames {
		if strings.HasPrefix(k, prefix) {
			delete(o.toolNames, k)
		}
	}
}

// invState is what the observer keeps for one invocation in progress.
type invState struct {
	mu         sync.Mutex
	root       trace.Span
	agents     map[string]trace.Span // by branch
	models     map[string]trace.Span // by branch
	tools      map[string]trace.Span // by function call id
	toolStarts map[string]time.Time  // by function call id
}

func newObserver(m *metrics, tp trace.TracerProvider) *observer {
	o := &observer{m: m}
	if tp != nil {
		o.tracer = tp.Tracer("github.com/adkhost/adkhost/host/server")
	}
	return o
}

func (o *observer) Name() string { return "adkhost_observer" }

func (o *observer) state(id string) *invState {
	if v, ok := o.invs.Load(id); ok {
		return v.(*invState)
	}
	st := &invState{toolStarts: map[string]time.Time{}}
	if o.tracer != nil { // without a tracer the span maps are only read
		st.agents, st.models, st.tools = map[string]trace.Span{}, map[string]trace.Span{}, map[string]trace.Span{}
	}
	v, _ := o.invs.LoadOrStore(id, st)
	return v.(*invState)
}

// finish ends whatever spans of the invocation are still open and forgets
// it. Idempotent: AfterRun, OnRunError and the run handler all call it.
func (o *observer) finish(id string, err error) {
	v, ok := o.invs.LoadAndDelete(id)
	if !ok {
		return
	}
	st := v.(*invState)
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, m := range []map[string]trace.Span{st.tools, st.models, st.agents} {
		for _, sp := range m {
			sp.End()
		}
	}
	if st.root != nil {
		if err != nil {
			st.root.RecordError(err)
			st.root.SetStatus(codes.Error, err.Error())
		}
		st.root.End()
	}
}

// parentCtx returns ctx carrying the span a new span under branch should
// hang from: the enclosing agent's, else the invocation's.
func (st *invState) parentCtx(ctx context.Context, branch string) context.Context {
	for b := branch; ; b = parentBranch(b) {
		if sp, ok := st.agents[b]; ok {
			return trace.ContextWithSpan(ctx, sp)
		}
		if b == "" {
			break
		}
	}
	if st.root != nil {
		return trace.ContextWithSpan(ctx, st.root)
	}
	return ctx
}

func (o *observer) BeforeRun(ctx callbacks.ReadonlyContext) (*genai.Content, error) {
	if o.tracer == nil {
		return nil, nil
	}
	st := o.state(ctx.InvocationID())
	_, sp := o.tracer.Start(ctx, "invocation", trace.WithAttributes(
		attribute.String("gen_ai.conversation.id", ctx.Session().ID),
		attribute.String("adkhost.app", ctx.AppName()),
		attribute.String("adkhost.user", ctx.UserID()),
		attribute.String("adkhost.invocation_id", ctx.InvocationID()),
	))
	st.mu.Lock()
	st.root = sp
	st.mu.Unlock()
	return nil, nil
}

func (o *observer) AfterRun(ctx callbacks.ReadonlyContext) error {
	o.finish(ctx.InvocationID(), nil)
	return nil
}

func (o *observer) OnRunError(ctx callbacks.ReadonlyContext, err error) {
	o.m.errors.WithLabelValues(ctx.AppName(), "run").Inc()
	o.finish(ctx.InvocationID(), err)
}

func (o *observer) BeforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	if o.tracer == nil {
		return nil, nil
	}
	st := o.state(ctx.InvocationID())
	st.mu.Lock()
	defer st.mu.Unlock()
	parent := st.parentCtx(ctx, parentBranch(ctx.Branch()))
	_, sp := o.tracer.Start(parent, "invoke_agent "+ctx.AgentName(), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", ctx.AgentName()),
	))
	if old, ok := st.agents[ctx.Branch()]; ok {
		old.End()
	}
	st.agents[ctx.Branch()] = sp
	return nil, nil
}

func (o *observer) AfterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	o.endSpan(ctx.InvocationID(), func(st *invState) map[string]trace.Span { return st.agents }, ctx.Branch(), nil)
	return nil, nil
}

func (o *observer) OnAgentError(ctx callbacks.CallbackContext, err error) {
	o.m.errors.WithLabelValues(ctx.AppName(), "agent").Inc()
	o.endSpan(ctx.InvocationID(), func(st *invState) map[string]trace.Span { return st.agents }, ctx.Branch(), err)
}

func (o *observer) BeforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	o.m.modelCalls.WithLabelValues(ctx.AppName()).Inc()
	if o.tracer == nil {
		return nil, nil
	}
	st := o.state(ctx.InvocationID())
	st.mu.Lock()
	defer st.mu.Unlock()
	_, sp := o.tracer.Start(st.parentCtx(ctx, ctx.Branch()), "call_llm", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "call_llm"),
		attribute.String("gen_ai.request.model", req.Model),
	))
	if old, ok := st.models[ctx.Branch()]; ok {
		old.End()
	}
	st.models[ctx.Branch()] = sp
	return nil, nil
}

func (o *observer) AfterModel(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
	if resp != nil && resp.Partial {
		return nil, nil // the span covers the whole stream
	}
	o.endSpan(ctx.InvocationID(), func(st *invState) map[string]trace.Span { return st.models }, ctx.Branch(), nil)
	return nil, nil
}

func (o *observer) OnModelError(ctx callbacks.CallbackContext, _ *model.Request, err error) (*model.Response, error) {
	o.m.errors.WithLabelValues(ctx.AppName(), "model").Inc()
	o.endSpan(ctx.InvocationID(), func(st *invState) map[string]trace.Span { return st.models }, ctx.Branch(), err)
	return nil, nil
}

func (o *observer) BeforeTool(ctx callbacks.ToolContext, t callbacks.Tool, _ map[string]any) (map[string]any, error) {
	st := o.state(ctx.InvocationID())
	st.mu.Lock()
	defer st.mu.Unlock()
	st.toolStarts[ctx.FunctionCallID()] = time.Now()
	if o.tracer != nil {
		_, sp := o.tracer.Start(st.parentCtx(ctx, ctx.Branch()), "execute_tool "+t.Name(), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", t.Name()),
			attribute.String("gen_ai.tool.call.id", ctx.FunctionCallID()),
			attribute.String("adkhost.module", moduleOf(t)),
		))
		st.tools[ctx.FunctionCallID()] = sp
	}
	return nil, nil
}

func (o *observer) AfterTool(ctx callbacks.ToolContext, t callbacks.Tool, _, _ map[string]any) (map[string]any, error) {
	o.toolDone(ctx, t, nil)
	return nil, nil
}

func (o *observer) OnToolError(ctx callbacks.ToolContext, t callbacks.Tool, _ map[string]any, err error) (map[string]any, error) {
	o.m.errors.WithLabelValues(ctx.AppName(), "tool").Inc()
	o.toolDone(ctx, t, err)
	return nil, nil
}

// toolDone counts a finished tool call and observes its latency when the
// tool runs in a Wasm module.
func (o *observer) toolDone(ctx callbacks.ToolContext, t callbacks.Tool, err error) {
	mod := moduleOf(t)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	name := t.Name()
	switch {
	case errors.As(err, new(*engine.ToolNotFoundError)):
		// The model chose that name: keep it out of the label values, so
		// that a confused model cannot grow the metric without bound.
		name = "<unknown>"
	case mod == "":
		name = o.toolLabel(ctx.AppName(), name)
	}
	o.m.toolCalls.WithLabelValues(ctx.AppName(), mod, name, outcome).Inc()
	st := o.state(ctx.InvocationID())
	st.mu.Lock()
	start, ok := st.toolStarts[ctx.FunctionCallID()]
	delete(st.toolStarts, ctx.FunctionCallID())
	sp := st.tools[ctx.FunctionCallID()]
	delete(st.tools, ctx.FunctionCallID())
	st.mu.Unlock()
	if ok && mod != "" {
		o.m.wasmCallDur.WithLabelValues(mod, t.Name()).Observe(time.Since(start).Seconds())
	}
	if sp != nil {
		if err != nil {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, err.Error())
		}
		sp.End()
	}
}

// endSpan ends the span of key in the map pick selects.
func (o *observer) endSpan(id string, pick func(*invState) map[string]trace.Span, key string, err error) {
	if o.tracer == nil {
		return
	}
	v, ok := o.invs.Load(id)
	if !ok {
		return
	}
	st := v.(*invState)
	st.mu.Lock()
	m := pick(st)
	sp := m[key]
	delete(m, key)
	st.mu.Unlock()
	if sp == nil {
		return
	}
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// moduleOf names the Wasm module providing t, or "" for another tool.
func moduleOf(t callbacks.Tool) string {
	if mt, ok := t.(interface{ Module() *host.Module }); ok && mt.Module() != nil {
		return mt.Module().Name()
	}
	return ""
}

func parentBranch(b string) string {
	if i := strings.LastIndexByte(b, '.'); i >= 0 {
		return b[:i]
	}
	return ""
}

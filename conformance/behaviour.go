package conformance

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// callbackLog is the trace's callback_log (FORMAT.md §2.5). Tools of one
// model response may run concurrently in the engine, so it is locked.
type callbackLog struct {
	mu      sync.Mutex
	entries []any
}

func (l *callbackLog) add(e map[string]any) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

// set adds a key to an entry already in the log (an item's results, known
// after it was logged).
func (l *callbackLog) set(e map[string]any, k string, v any) {
	l.mu.Lock()
	e[k] = v
	l.mu.Unlock()
}

func (l *callbackLog) snapshot() []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// hookInfo is what a behaviour item sees of its invocation; nil fields are
// not logged.
type hookInfo struct {
	agent, tool, err, author *string
	args                     map[string]any
}

func strp(s string) *string { return &s }

// behaviourRun is one behaviour item at run time, with its call count.
type behaviourRun struct {
	*Behaviour
	log   *callbackLog
	mu    sync.Mutex
	calls int64
}

func (b *behaviourRun) matches(info hookInfo, calls int64) bool {
	w := b.When
	eq := func(want, got *string) bool { return want == nil || (got != nil && *got == *want) }
	if !eq(w.Agent, info.agent) || !eq(w.Tool, info.tool) || !eq(w.Author, info.author) {
		return false
	}
	if w.ErrorContains != nil && (info.err == nil || !strings.Contains(*info.err, *w.ErrorContains)) {
		return false
	}
	if w.Nth != nil && calls != *w.Nth {
		return false
	}
	return true
}

// result is a behaviour's return value, by hook class.
type result struct {
	content  *genai.Content
	response *model.Response
	value    map[string]any
	event    *EventUpdateSpec
}

// run logs the call and applies the item: set_state, artifacts, escalate,
// transfer_to_agent, set_args, append_instruction, raise, return
// (FORMAT.md §1.5). cc is nil for hooks without a callback context.
func (b *behaviourRun) run(info hookInfo, cc callbacks.CallbackContext, args map[string]any, req *model.Request) (*result, error) {
	b.mu.Lock()
	b.calls++
	calls := b.calls
	b.mu.Unlock()
	matched := b.matches(info, calls)
	entry := map[string]any{"hook": b.Hook, "owner": b.Owner, "index": int64(b.Index), "matched": matched}
	if info.agent != nil {
		entry["agent"] = *info.agent
	}
	if info.tool != nil {
		entry["tool"] = *info.tool
	}
	if info.args != nil {
		entry["args"] = pyDump(info.args)
	}
	if info.err != nil {
		entry["error"] = *info.err
	}
	if info.author != nil {
		entry["author"] = *info.author
	}
	b.log.add(entry)
	if !matched {
		return nil, nil
	}
	for _, kv := range b.SetState {
		cc.State().SetOrdered(kv.Key, deepCopy(kv.Value), kv.Order)
	}
	if b.Artifacts != nil {
		results, err := runArtifactOps(cc, b.Artifacts)
		if err != nil {
			return nil, err
		}
		b.log.set(entry, "artifacts", results)
	}
	if b.Escalate {
		cc.Actions().Escalate = true
	}
	if b.TransferToAgent != nil {
		cc.Actions().TransferToAgent = *b.TransferToAgent
	}
	for _, kv := range b.SetArgs {
		args[kv.Key] = deepCopy(kv.Value)
	}
	if b.AppendInstruction != nil {
		req.AppendInstructions(*b.AppendInstruction)
	}
	if b.Raise != nil {
		return nil, &PyError{Type: b.Raise.Type, Msg: b.Raise.Msg}
	}
	if !b.HasReturn {
		return nil, nil
	}
	switch {
	case b.ReturnContent != nil:
		return &result{content: buildContent(b.ReturnContent)}, nil
	case b.ReturnResponse != nil:
		return &result{response: buildResponse(b.ReturnResponse)}, nil
	case b.ReturnEvent != nil:
		return &result{event: b.ReturnEvent}, nil
	}
	switch v := deepCopy(b.ReturnValue).(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return &result{value: v}, nil
	default:
		// The Go callback types return maps; a scalar is wrapped the way
		// google-adk wraps a tool's non-dict result.
		return &result{value: map[string]any{"result": v}}, nil
	}
}

// firstResult runs items in order until one returns a value (a plugin
// hook, or one agent callback made of one item).
func firstResult(items []*behaviourRun, info hookInfo, cc callbacks.CallbackContext, args map[string]any, req *model.Request) (*result, error) {
	for _, b := range items {
		r, err := b.run(info, cc, args, req)
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, nil
}

func (r *result) getContent() *genai.Content {
	if r == nil {
		return nil
	}
	return r.content
}

func (r *result) getResponse() *model.Response {
	if r == nil {
		return nil
	}
	return r.response
}

func (r *result) getValue() map[string]any {
	if r == nil {
		return nil
	}
	return r.value
}

// ---------------------------------------------------------------------------
// Agent callbacks: each behaviour item is one callback in the agent's list.

type agentCallbacks struct {
	beforeAgent  []callbacks.BeforeAgent
	afterAgent   []callbacks.AfterAgent
	beforeModel  []callbacks.BeforeModel
	afterModel   []callbacks.AfterModel
	onModelError []callbacks.OnModelError
	beforeTool   []callbacks.BeforeTool
	afterTool    []callbacks.AfterTool
	onToolError  []callbacks.OnToolError
}

func buildAgentCallbacks(hooks map[string][]*Behaviour, log *callbackLog) agentCallbacks {
	var cbs agentCallbacks
	for _, hook := range agentHooks {
		for _, spec := range hooks[hook] {
			b := &behaviourRun{Behaviour: spec, log: log}
			switch hook {
			case "before_agent":
				cbs.beforeAgent = append(cbs.beforeAgent, func(cc callbacks.CallbackContext) (*genai.Content, error) {
					r, err := b.run(hookInfo{agent: strp(cc.AgentName())}, cc, nil, nil)
					return r.getContent(), err
				})
			case "after_agent":
				cbs.afterAgent = append(cbs.afterAgent, func(cc callbacks.CallbackContext) (*genai.Content, error) {
					r, err := b.run(hookInfo{agent: strp(cc.AgentName())}, cc, nil, nil)
					return r.getContent(), err
				})
			case "before_model":
				cbs.beforeModel = append(cbs.beforeModel, func(cc callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
					r, err := b.run(hookInfo{agent: strp(cc.AgentName())}, cc, nil, req)
					return r.getResponse(), err
				})
			case "after_model":
				cbs.afterModel = append(cbs.afterModel, func(cc callbacks.CallbackContext, _ *model.Response) (*model.Response, error) {
					r, err := b.run(hookInfo{agent: strp(cc.AgentName())}, cc, nil, nil)
					return r.getResponse(), err
				})
			case "on_model_error":
				cbs.onModelError = append(cbs.onModelError, func(cc callbacks.CallbackContext, req *model.Request, cause error) (*model.Response, error) {
					r, err := b.run(hookInfo{agent: strp(cc.AgentName()), err: strp(pyErrorString(cause))}, cc, nil, req)
					return r.getResponse(), err
				})
			case "before_tool":
				cbs.beforeTool = append(cbs.beforeTool, func(tc callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
					r, err := b.run(hookInfo{agent: strp(tc.AgentName()), tool: strp(t.Name()), args: args}, tc, args, nil)
					return r.getValue(), err
				})
			case "after_tool":
				cbs.afterTool = append(cbs.afterTool, func(tc callbacks.ToolContext, t callbacks.Tool, args, _ map[string]any) (map[string]any, error) {
					r, err := b.run(hookInfo{agent: strp(tc.AgentName()), tool: strp(t.Name()), args: args}, tc, args, nil)
					return r.getValue(), err
				})
			case "on_tool_error":
				cbs.onToolError = append(cbs.onToolError, func(tc callbacks.ToolContext, t callbacks.Tool, args map[string]any, cause error) (map[string]any, error) {
					r, err := b.run(hookInfo{agent: strp(tc.AgentName()), tool: strp(t.Name()), args: args, err: strp(pyErrorString(cause))}, tc, args, nil)
					return r.getValue(), err
				})
			}
		}
	}
	return cbs
}

// ---------------------------------------------------------------------------
// Plugins.

// scenarioPlugin runs a plugin's behaviour lists; hooks without behaviours
// do nothing, like BasePlugin's defaults.
type scenarioPlugin struct {
	callbacks.NoopPlugin
	name  string
	hooks map[string][]*behaviourRun
}

var _ callbacks.Plugin = (*scenarioPlugin)(nil)

func newScenarioPlugin(spec *PluginSpec, log *callbackLog) *scenarioPlugin {
	p := &scenarioPlugin{name: spec.Name, hooks: map[string][]*behaviourRun{}}
	for hook, items := range spec.Hooks {
		for _, it := range items {
			p.hooks[hook] = append(p.hooks[hook], &behaviourRun{Behaviour: it, log: log})
		}
	}
	return p
}

func (p *scenarioPlugin) Name() string { return p.name }

func (p *scenarioPlugin) OnUserMessage(ctx callbacks.ReadonlyContext, _ *genai.Content) (*genai.Content, error) {
	r, err := firstResult(p.hooks["on_user_message"], hookInfo{agent: strp(ctx.AgentName())}, nil, nil, nil)
	return r.getContent(), err
}

func (p *scenarioPlugin) BeforeRun(ctx callbacks.ReadonlyContext) (*genai.Content, error) {
	r, err := firstResult(p.hooks["before_run"], hookInfo{agent: strp(ctx.AgentName())}, nil, nil, nil)
	return r.getContent(), err
}

func (p *scenarioPlugin) AfterRun(ctx callbacks.ReadonlyContext) error {
	_, err := firstResult(p.hooks["after_run"], hookInfo{agent: strp(ctx.AgentName())}, nil, nil, nil)
	return err
}

// OnEvent returns google-adk's Event(author=event.author, **fields) for
// an item's replacement; the engine merges the fields it sets.
func (p *scenarioPlugin) OnEvent(_ callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
	r, err := firstResult(p.hooks["on_event"], hookInfo{author: strp(e.Author)}, nil, nil, nil)
	if err != nil || r == nil || r.event == nil {
		return nil, err
	}
	repl := &session.Event{Author: e.Author}
	if r.event.Content != nil {
		repl.Content = buildContent(r.event.Content)
	}
	if r.event.CustomMetadata != nil {
		repl.CustomMetadata = deepCopyMap(r.event.CustomMetadata)
	}
	return repl, nil
}

func (p *scenarioPlugin) BeforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	r, err := firstResult(p.hooks["before_agent"], hookInfo{agent: strp(ctx.AgentName())}, ctx, nil, nil)
	return r.getContent(), err
}

func (p *scenarioPlugin) AfterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	r, err := firstResult(p.hooks["after_agent"], hookInfo{agent: strp(ctx.AgentName())}, ctx, nil, nil)
	return r.getContent(), err
}

func (p *scenarioPlugin) BeforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	r, err := firstResult(p.hooks["before_model"], hookInfo{agent: strp(ctx.AgentName())}, ctx, nil, req)
	return r.getResponse(), err
}

func (p *scenarioPlugin) AfterModel(ctx callbacks.CallbackContext, _ *model.Response) (*model.Response, error) {
	r, err := firstResult(p.hooks["after_model"], hookInfo{agent: strp(ctx.AgentName())}, ctx, nil, nil)
	return r.getResponse(), err
}

func (p *scenarioPlugin) OnModelError(ctx callbacks.CallbackContext, req *model.Request, cause error) (*model.Response, error) {
	r, err := firstResult(p.hooks["on_model_error"], hookInfo{agent: strp(ctx.AgentName()), err: strp(pyErrorString(cause))}, ctx, nil, req)
	return r.getResponse(), err
}

func (p *scenarioPlugin) BeforeTool(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
	r, err := firstResult(p.hooks["before_tool"], hookInfo{agent: strp(ctx.AgentName()), tool: strp(t.Name()), args: args}, ctx, args, nil)
	return r.getValue(), err
}

func (p *scenarioPlugin) AfterTool(ctx callbacks.ToolContext, t callbacks.Tool, args, _ map[string]any) (map[string]any, error) {
	r, err := firstResult(p.hooks["after_tool"], hookInfo{agent: strp(ctx.AgentName()), tool: strp(t.Name()), args: args}, ctx, args, nil)
	return r.getValue(), err
}

func (p *scenarioPlugin) OnToolError(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any, cause error) (map[string]any, error) {
	r, err := firstResult(p.hooks["on_tool_error"], hookInfo{agent: strp(ctx.AgentName()), tool: strp(t.Name()), args: args, err: strp(pyErrorString(cause))}, ctx, args, nil)
	return r.getValue(), err
}

// OnAgentError is google-adk's on_agent_error_callback (told only).
func (p *scenarioPlugin) OnAgentError(ctx callbacks.CallbackContext, cause error) {
	_, _ = firstResult(p.hooks["on_agent_error"], hookInfo{agent: strp(ctx.AgentName()), err: strp(pyErrorString(cause))}, ctx, nil, nil)
}

// OnRunError is google-adk's on_run_error_callback (told only).
func (p *scenarioPlugin) OnRunError(ctx callbacks.ReadonlyContext, cause error) {
	_, _ = firstResult(p.hooks["on_run_error"], hookInfo{agent: strp(ctx.AgentName()), err: strp(pyErrorString(cause))}, nil, nil, nil)
}

// runArtifactOps runs artifact operations through a callback or tool
// context and returns their results as the trace shows them: a saved
// version, a loaded part (None when missing), a list of names.
func runArtifactOps(cc callbacks.CallbackContext, ops []ArtifactOp) ([]any, error) {
	results := []any{}
	for _, op := range ops {
		switch {
		case op.Save != nil:
			v, err := cc.SaveArtifact(*op.Save, &genai.Part{InlineData: &genai.Blob{MIMEType: op.MIMEType, Data: slices.Clone(op.Data)}})
			if err != nil {
				return nil, err
			}
			results = append(results, int64(v))
		case op.Load != nil:
			version := artifact.Latest
			if op.Version != nil {
				version = int(*op.Version)
			}
			part, err := cc.LoadArtifact(*op.Load, version)
			switch {
			case errors.Is(err, artifact.ErrNotFound):
				results = append(results, nil)
			case err != nil:
				return nil, err
			default:
				results = append(results, pyDump(part))
			}
		default:
			names, err := cc.ListArtifacts()
			if err != nil {
				return nil, err
			}
			l := make([]any, len(names))
			for i, n := range names {
				l[i] = n
			}
			results = append(results, l)
		}
	}
	return results, nil
}

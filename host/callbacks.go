package host

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Callbacks returns the agent callbacks of the hooks the module implements,
// one func in each such list, ready for engine.LlmAgentConfig's lists. Each
// func follows the ABI's output semantics: an empty output (or one without
// a value) is no answer, nil, and the chain goes on; a content, response or
// result is the answer. A before_model "request" replaces the request in
// place, a before_tool "args" replaces the arguments in place, as
// google-adk's callbacks edit them. Failures are *Error values.
func (m *Module) Callbacks() callbacks.Agent {
	var a callbacks.Agent
	if m.hooks[abi.HookBeforeAgent] {
		a.BeforeAgent = []callbacks.BeforeAgent{m.beforeAgent}
	}
	if m.hooks[abi.HookAfterAgent] {
		a.AfterAgent = []callbacks.AfterAgent{m.afterAgent}
	}
	if m.hooks[abi.HookBeforeModel] {
		a.BeforeModel = []callbacks.BeforeModel{m.beforeModel}
	}
	if m.hooks[abi.HookAfterModel] {
		a.AfterModel = []callbacks.AfterModel{m.afterModel}
	}
	if m.hooks[abi.HookOnModelError] {
		a.OnModelError = []callbacks.OnModelError{m.onModelError}
	}
	if m.hooks[abi.HookBeforeTool] {
		a.BeforeTool = []callbacks.BeforeTool{m.beforeTool}
	}
	if m.hooks[abi.HookAfterTool] {
		a.AfterTool = []callbacks.AfterTool{m.afterTool}
	}
	if m.hooks[abi.HookOnToolError] {
		a.OnToolError = []callbacks.OnToolError{m.onToolError}
	}
	return a
}

func (m *Module) beforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	return m.agentHook(ctx, abi.HookBeforeAgent)
}

func (m *Module) afterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	return m.agentHook(ctx, abi.HookAfterAgent)
}

func (m *Module) agentHook(ctx callbacks.CallbackContext, hook abi.Hook) (*genai.Content, error) {
	h := callbackHost(m, hook, ctx)
	out, err := invoke[abi.ContentOutput](ctx, m, hook, "", &abi.AgentInput{Context: h.info()}, h)
	if err != nil {
		return nil, err
	}
	c, err := ContentFromABI(out.Content, nil)
	if err != nil {
		return nil, m.outputErr(hook, err)
	}
	return c, nil
}

func (m *Module) beforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	const hook = abi.HookBeforeModel
	ar, err := RequestToABI(req)
	if err != nil {
		return nil, m.inputError(hook, err)
	}
	h := callbackHost(m, hook, ctx)
	out, err := invoke[abi.ModelOutput](ctx, m, hook, "", &abi.BeforeModelInput{Context: h.info(), Request: ar}, h)
	if err != nil {
		return nil, err
	}
	if out.Request != nil {
		if req == nil {
			return nil, m.outputErr(hook, errors.New("a request replaces no request"))
		}
		nr, err := RequestFromABI(out.Request, req)
		if err != nil {
			return nil, m.outputErr(hook, err)
		}
		*req = *nr
	}
	return m.response(hook, out, nil)
}

func (m *Module) afterModel(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
	const hook = abi.HookAfterModel
	ar, err := ResponseToABI(resp)
	if err != nil {
		return nil, m.inputError(hook, err)
	}
	h := callbackHost(m, hook, ctx)
	out, err := invoke[abi.ModelOutput](ctx, m, hook, "", &abi.AfterModelInput{Context: h.info(), Response: ar}, h)
	if err != nil {
		return nil, err
	}
	return m.response(hook, out, resp)
}

func (m *Module) onModelError(ctx callbacks.CallbackContext, req *model.Request, cause error) (*model.Response, error) {
	const hook = abi.HookOnModelError
	ar, err := RequestToABI(req)
	if err != nil {
		return nil, m.inputError(hook, err)
	}
	h := callbackHost(m, hook, ctx)
	in := &abi.ModelErrorInput{Context: h.info(), Request: ar, Error: errorText(cause)}
	out, err := invoke[abi.ModelOutput](ctx, m, hook, "", in, h)
	if err != nil {
		return nil, err
	}
	return m.response(hook, out, nil)
}

// response converts a ModelOutput's response; only before_model may send a
// request.
func (m *Module) response(hook abi.Hook, out *abi.ModelOutput, base *model.Response) (*model.Response, error) {
	if out.Request != nil && hook != abi.HookBeforeModel {
		return nil, m.outputErr(hook, errors.New(`"request" is an output of before_model only`))
	}
	r, err := ResponseFromABI(out.Response, base)
	if err != nil {
		return nil, m.outputErr(hook, err)
	}
	return r, nil
}

func toolInfo(t callbacks.Tool) abi.ToolInfo {
	if t == nil {
		return abi.ToolInfo{}
	}
	return abi.ToolInfo{Name: t.Name(), Description: t.Description(), LongRunning: t.IsLongRunning()}
}

func (m *Module) beforeTool(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
	const hook = abi.HookBeforeTool
	h := toolHost(m, hook, ctx)
	in := &abi.BeforeToolInput{Context: h.info(), Tool: toolInfo(t), Args: args}
	if c := ctx.ToolConfirmation(); c != nil {
		in.Confirmation = &abi.ToolConfirmation{Hint: c.Hint, Confirmed: c.Confirmed, Payload: c.Payload}
	}
	out, err := invoke[abi.BeforeToolOutput](ctx, m, hook, "", in, h)
	if err != nil {
		return nil, err
	}
	if out.Args != nil {
		if args == nil {
			return nil, m.outputErr(hook, errors.New("args replace no arguments"))
		}
		clear(args)
		maps.Copy(args, out.Args)
	}
	return out.Result, nil
}

func (m *Module) afterTool(ctx callbacks.ToolContext, t callbacks.Tool, args, result map[string]any) (map[string]any, error) {
	const hook = abi.HookAfterTool
	h := toolHost(m, hook, ctx)
	out, err := invoke[abi.ToolOutput](ctx, m, hook, "", &abi.AfterToolInput{Context: h.info(), Tool: toolInfo(t), Args: args, Result: result}, h)
	if err != nil {
		return nil, err
	}
	return out.Result, nil
}

func (m *Module) onToolError(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any, cause error) (map[string]any, error) {
	const hook = abi.HookOnToolError
	h := toolHost(m, hook, ctx)
	out, err := invoke[abi.ToolOutput](ctx, m, hook, "", &abi.ToolErrorInput{Context: h.info(), Tool: toolInfo(t), Args: args, Error: errorText(cause)}, h)
	if err != nil {
		return nil, err
	}
	return out.Result, nil
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Plugin is a module as a runner plugin: each callbacks.Plugin hook the
// module implements calls it, with the semantics of Callbacks; the others do
// nothing. Its name is the module's. The run-level hooks (on_user_message,
// before_run, on_event, after_run, on_run_error) have no callback context:
// there the guest can read state but not write it, and actions and artifacts
// answer UNAVAILABLE.
//
// OnAgentError and OnRunError (on_agent_error, on_run_error) only tell the
// guest: a failure of the call, or an "error" in its output, is logged to
// the module's logger at warn level and never changes the run.
//
// A plugin hook runs for every agent, model call, tool call or event of
// the runner: each is a guest call, so list only the hooks a module needs.
type Plugin struct {
	callbacks.NoopPlugin
	m *Module
}

var _ callbacks.Plugin = (*Plugin)(nil)

// Plugin returns the module as a plugin.
func (m *Module) Plugin() *Plugin { return &Plugin{m: m} }

func (p *Plugin) Name() string { return p.m.name }

func (p *Plugin) OnUserMessage(ctx callbacks.ReadonlyContext, msg *genai.Content) (*genai.Content, error) {
	const hook = abi.HookOnUserMessage
	if !p.m.hooks[hook] {
		return nil, nil
	}
	h := runHost(p.m, hook, ctx)
	out, err := invoke[abi.UserMessageOutput](ctx, p.m, hook, "", &abi.UserMessageInput{Context: h.info(), Message: ContentToABI(msg)}, h)
	if err != nil {
		return nil, err
	}
	c, err := ContentFromABI(out.Message, msg)
	if err != nil {
		return nil, p.m.outputErr(hook, err)
	}
	return c, nil
}

func (p *Plugin) BeforeRun(ctx callbacks.ReadonlyContext) (*genai.Content, error) {
	const hook = abi.HookBeforeRun
	if !p.m.hooks[hook] {
		return nil, nil
	}
	h := runHost(p.m, hook, ctx)
	out, err := invoke[abi.ContentOutput](ctx, p.m, hook, "", &abi.RunInput{Context: h.info()}, h)
	if err != nil {
		return nil, err
	}
	c, err := ContentFromABI(out.Content, nil)
	if err != nil {
		return nil, p.m.outputErr(hook, err)
	}
	return c, nil
}

func (p *Plugin) OnEvent(ctx callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
	const hook = abi.HookOnEvent
	if !p.m.hooks[hook] {
		return nil, nil
	}
	ae, err := EventToABI(e)
	if err != nil {
		return nil, p.m.inputError(hook, err)
	}
	h := runHost(p.m, hook, ctx)
	out, err := invoke[abi.EventOutput](ctx, p.m, hook, "", &abi.EventInput{Context: h.info(), Event: ae}, h)
	if err != nil {
		return nil, err
	}
	ev, err := EventFromABI(out.Event, e)
	if err != nil {
		return nil, p.m.outputErr(hook, err)
	}
	return ev, nil
}

func (p *Plugin) AfterRun(ctx callbacks.ReadonlyContext) error {
	const hook = abi.HookAfterRun
	if !p.m.hooks[hook] {
		return nil
	}
	h := runHost(p.m, hook, ctx)
	_, err := invoke[abi.AfterRunOutput](ctx, p.m, hook, "", &abi.RunInput{Context: h.info()}, h)
	return err
}

func (p *Plugin) BeforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	if !p.m.hooks[abi.HookBeforeAgent] {
		return nil, nil
	}
	return p.m.beforeAgent(ctx)
}

func (p *Plugin) AfterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	if !p.m.hooks[abi.HookAfterAgent] {
		return nil, nil
	}
	return p.m.afterAgent(ctx)
}

func (p *Plugin) BeforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	if !p.m.hooks[abi.HookBeforeModel] {
		return nil, nil
	}
	return p.m.beforeModel(ctx, req)
}

func (p *Plugin) AfterModel(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
	if !p.m.hooks[abi.HookAfterModel] {
		return nil, nil
	}
	return p.m.afterModel(ctx, resp)
}

func (p *Plugin) OnModelError(ctx callbacks.CallbackContext, req *model.Request, err error) (*model.Response, error) {
	if !p.m.hooks[abi.HookOnModelError] {
		return nil, nil
	}
	return p.m.onModelError(ctx, req, err)
}

func (p *Plugin) BeforeTool(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
	if !p.m.hooks[abi.HookBeforeTool] {
		return nil, nil
	}
	return p.m.beforeTool(ctx, t, args)
}

func (p *Plugin) AfterTool(ctx callbacks.ToolContext, t callbacks.Tool, args, result map[string]any) (map[string]any, error) {
	if !p.m.hooks[abi.HookAfterTool] {
		return nil, nil
	}
	return p.m.afterTool(ctx, t, args, result)
}

func (p *Plugin) OnToolError(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any, err error) (map[string]any, error) {
	if !p.m.hooks[abi.HookOnToolError] {
		return nil, nil
	}
	return p.m.onToolError(ctx, t, args, err)
}

// OnAgentError tells the guest that an agent's run failed (on_agent_error).
// Failures are logged, never returned.
func (p *Plugin) OnAgentError(ctx callbacks.CallbackContext, cause error) {
	const hook = abi.HookOnAgentError
	if !p.m.hooks[hook] {
		return
	}
	h := callbackHost(p.m, hook, ctx)
	p.m.notify(ctx, hook, &abi.AgentErrorInput{Context: h.info(), Error: errorText(cause)}, h)
}

// OnRunError tells the guest that the run failed (on_run_error). Failures
// are logged, never returned.
func (p *Plugin) OnRunError(ctx callbacks.ReadonlyContext, cause error) {
	const hook = abi.HookOnRunError
	if !p.m.hooks[hook] {
		return
	}
	h := runHost(p.m, hook, ctx)
	p.m.notify(ctx, hook, &abi.RunErrorInput{Context: h.info(), Error: errorText(cause)}, h)
}

// notify calls a notification-only hook and logs its failure, if any, to
// the module's logger; a panic of the call is recovered and logged too, so
// nothing the guest or the host does here can change the run.
func (m *Module) notify(ctx callbacks.ReadonlyContext, hook abi.Hook, in abi.Message, h *callHost) {
	defer func() {
		if r := recover(); r != nil {
			m.logger.Log(ctx, slog.LevelError, "notification hook panicked", "module", m.name, "hook", string(hook), "panic", fmt.Sprint(r))
		}
	}()
	if _, err := invoke[abi.NotifyOutput](ctx, m, hook, "", in, h); err != nil {
		m.logger.Log(ctx, slog.LevelWarn, "notification hook failed", "module", m.name, "hook", string(hook), "invocation", ctx.InvocationID(), "error", err.Error())
	}
}

package callbacks

import (
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Plugins is a runner's ordered plugin list; its methods run one hook across
// all plugins, stopping at the first non-nil result.
type Plugins []Plugin

// pluginChain runs hook on each plugin until one returns a non-nil result.
func pluginChain[T comparable](ps Plugins, hook string, call func(Plugin) (T, error)) (T, error) {
	var zero T
	for _, p := range ps {
		r, err := call(p)
		if err != nil {
			return zero, &PluginError{Plugin: p.Name(), Hook: hook, Err: err}
		}
		if r != zero {
			return r, nil
		}
	}
	return zero, nil
}

// agentChain runs callbacks in order until one returns a non-nil result.
func agentChain[F any, T comparable](fns []F, call func(F) (T, error)) (T, error) {
	var zero T
	for _, f := range fns {
		r, err := call(f)
		if err != nil || r != zero {
			return r, err
		}
	}
	return zero, nil
}

// mapChain is agentChain for map results, where nil means "no answer".
func mapChain[F any](fns []F, call func(F) (map[string]any, error)) (map[string]any, error) {
	for _, f := range fns {
		r, err := call(f)
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, nil
}

func (ps Plugins) OnUserMessage(ctx ReadonlyContext, msg *genai.Content) (*genai.Content, error) {
	return pluginChain(ps, "on_user_message_callback", func(p Plugin) (*genai.Content, error) { return p.OnUserMessage(ctx, msg) })
}

func (ps Plugins) BeforeRun(ctx ReadonlyContext) (*genai.Content, error) {
	return pluginChain(ps, "before_run_callback", func(p Plugin) (*genai.Content, error) { return p.BeforeRun(ctx) })
}

func (ps Plugins) OnEvent(ctx ReadonlyContext, e *session.Event) (*session.Event, error) {
	return pluginChain(ps, "on_event_callback", func(p Plugin) (*session.Event, error) { return p.OnEvent(ctx, e) })
}

// AfterRun runs every plugin's AfterRun; it has no result to stop on.
func (ps Plugins) AfterRun(ctx ReadonlyContext) error {
	for _, p := range ps {
		if err := p.AfterRun(ctx); err != nil {
			return &PluginError{Plugin: p.Name(), Hook: "after_run_callback", Err: err}
		}
	}
	return nil
}

// BeforeAgent runs the plugins, then the agent's callbacks.
func BeforeAgentChain(ctx CallbackContext, ps Plugins, fns []BeforeAgent) (*genai.Content, error) {
	r, err := pluginChain(ps, "before_agent_callback", func(p Plugin) (*genai.Content, error) { return p.BeforeAgent(ctx) })
	if err != nil || r != nil {
		return r, err
	}
	return agentChain(fns, func(f BeforeAgent) (*genai.Content, error) { return f(ctx) })
}

// AfterAgentChain runs the plugins, then the agent's callbacks.
func AfterAgentChain(ctx CallbackContext, ps Plugins, fns []AfterAgent) (*genai.Content, error) {
	r, err := pluginChain(ps, "after_agent_callback", func(p Plugin) (*genai.Content, error) { return p.AfterAgent(ctx) })
	if err != nil || r != nil {
		return r, err
	}
	return agentChain(fns, func(f AfterAgent) (*genai.Content, error) { return f(ctx) })
}

// BeforeModelChain runs the plugins, then the agent's callbacks.
func BeforeModelChain(ctx CallbackContext, ps Plugins, fns []BeforeModel, req *model.Request) (*model.Response, error) {
	r, err := pluginChain(ps, "before_model_callback", func(p Plugin) (*model.Response, error) { return p.BeforeModel(ctx, req) })
	if err != nil || r != nil {
		return r, err
	}
	return agentChain(fns, func(f BeforeModel) (*model.Response, error) { return f(ctx, req) })
}

// AfterModelChain runs the plugins, then the agent's callbacks.
func AfterModelChain(ctx CallbackContext, ps Plugins, fns []AfterModel, resp *model.Response) (*model.Response, error) {
	r, err := pluginChain(ps, "after_model_callback", func(p Plugin) (*model.Response, error) { return p.AfterModel(ctx, resp) })
	if err != nil || r != nil {
		return r, err
	}
	return agentChain(fns, func(f AfterModel) (*model.Response, error) { return f(ctx, resp) })
}

// OnModelErrorChain runs the plugins, then the agent's callbacks.
func OnModelErrorChain(ctx CallbackContext, ps Plugins, fns []OnModelError, req *model.Request, cause error) (*model.Response, error) {
	r, err := pluginChain(ps, "on_model_error_callback", func(p Plugin) (*model.Response, error) { return p.OnModelError(ctx, req, cause) })
	if err != nil || r != nil {
		return r, err
	}
	return agentChain(fns, func(f OnModelError) (*model.Response, error) { return f(ctx, req, cause) })
}

// BeforeToolChain runs the plugins, then the agent's callbacks.
func BeforeToolChain(ctx ToolContext, ps Plugins, fns []BeforeTool, tool Tool, args map[string]any) (map[string]any, error) {
	r, err := pluginMapChain(ps, "before_tool_callback", func(p Plugin) (map[string]any, error) { return p.BeforeTool(ctx, tool, args) })
	if err != nil || r != nil {
		return r, err
	}
	return mapChain(fns, func(f BeforeTool) (map[string]any, error) { return f(ctx, tool, args) })
}

// AfterToolChain runs the plugins, then the agent's callbacks.
func AfterToolChain(ctx ToolContext, ps Plugins, fns []AfterTool, tool Tool, args, result map[string]any) (map[string]any, error) {
	r, err := pluginMapChain(ps, "after_tool_callback", func(p Plugin) (map[string]any, error) { return p.AfterTool(ctx, tool, args, result) })
	if err != nil || r != nil {
		return r, err
	}
	return mapChain(fns, func(f AfterTool) (map[string]any, error) { return f(ctx, tool, args, result) })
}

// OnToolErrorChain runs the plugins, then the agent's callbacks.
func OnToolErrorChain(ctx ToolContext, ps Plugins, fns []OnToolError, tool Tool, args map[string]any, cause error) (map[string]any, error) {
	r, err := pluginMapChain(ps, "on_tool_error_callback", func(p Plugin) (map[string]any, error) { return p.OnToolError(ctx, tool, args, cause) })
	if err != nil || r != nil {
		return r, err
	}
	return mapChain(fns, func(f OnToolError) (map[string]any, error) { return f(ctx, tool, args, cause) })
}

func pluginMapChain(ps Plugins, hook string, call func(Plugin) (map[string]any, error)) (map[string]any, error) {
	for _, p := range ps {
		r, err := call(p)
		if err != nil {
			return nil, &PluginError{Plugin: p.Name(), Hook: hook, Err: err}
		}
		if r != nil {
			return r, nil
		}
	}
	return nil, nil
}

// OnAgentError tells every plugin that an agent failed.
func (ps Plugins) OnAgentError(ctx CallbackContext, err error) {
	for _, p := range ps {
		p.OnAgentError(ctx, err)
	}
}

// OnRunError tells every plugin that the run failed.
func (ps Plugins) OnRunError(ctx ReadonlyContext, err error) {
	for _, p := range ps {
		p.OnRunError(ctx, err)
	}
}

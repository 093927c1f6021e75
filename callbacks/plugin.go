package callbacks

import (
	"fmt"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Plugin hooks into every agent, model and tool of a runner, and into the
// run itself (google-adk 2.13's BasePlugin: twelve hooks that may change the
// run and two that are only told of failures). Embed NoopPlugin to implement only
// the hooks you need. A hook returning a non-nil value ends the chain.
type Plugin interface {
	Name() string
	// OnUserMessage may replace the user's message before it is stored.
	OnUserMessage(ctx ReadonlyContext, msg *genai.Content) (*genai.Content, error)
	// BeforeRun may end the run early with this content as its only answer.
	BeforeRun(ctx ReadonlyContext) (*genai.Content, error)
	// OnEvent may replace an event before it is yielded (after it is stored).
	OnEvent(ctx ReadonlyContext, e *session.Event) (*session.Event, error)
	AfterRun(ctx ReadonlyContext) error
	BeforeAgent(ctx CallbackContext) (*genai.Content, error)
	AfterAgent(ctx CallbackContext) (*genai.Content, error)
	BeforeModel(ctx CallbackContext, req *model.Request) (*model.Response, error)
	AfterModel(ctx CallbackContext, resp *model.Response) (*model.Response, error)
	OnModelError(ctx CallbackContext, req *model.Request, err error) (*model.Response, error)
	BeforeTool(ctx ToolContext, tool Tool, args map[string]any) (map[string]any, error)
	AfterTool(ctx ToolContext, tool Tool, args, result map[string]any) (map[string]any, error)
	OnToolError(ctx ToolContext, tool Tool, args map[string]any, err error) (map[string]any, error)
	// OnAgentError is told that an agent's run failed; the error propagates
	// whatever the hook does.
	OnAgentError(ctx CallbackContext, err error)
	// OnRunError is told that the run failed; the error propagates.
	OnRunError(ctx ReadonlyContext, err error)
}

// NoopPlugin implements every hook by doing nothing. Embed it.
type NoopPlugin struct{}

func (NoopPlugin) OnUserMessage(ReadonlyContext, *genai.Content) (*genai.Content, error) {
	return nil, nil
}
func (NoopPlugin) BeforeRun(ReadonlyContext) (*genai.Content, error) { return nil, nil }
func (NoopPlugin) OnEvent(ReadonlyContext, *session.Event) (*session.Event, error) {
	return nil, nil
}
func (NoopPlugin) AfterRun(ReadonlyContext) error                      { return nil }
func (NoopPlugin) BeforeAgent(CallbackContext) (*genai.Content, error) { return nil, nil }
func (NoopPlugin) AfterAgent(CallbackContext) (*genai.Content, error)  { return nil, nil }
func (NoopPlugin) BeforeModel(CallbackContext, *model.Request) (*model.Response, error) {
	return nil, nil
}
func (NoopPlugin) AfterModel(CallbackContext, *model.Response) (*model.Response, error) {
	return nil, nil
}
func (NoopPlugin) OnModelError(CallbackContext, *model.Request, error) (*model.Response, error) {
	return nil, nil
}
func (NoopPlugin) BeforeTool(ToolContext, Tool, map[string]any) (map[string]any, error) {
	return nil, nil
}
func (NoopPlugin) AfterTool(ToolContext, Tool, map[string]any, map[string]any) (map[string]any, error) {
	return nil, nil
}
func (NoopPlugin) OnToolError(ToolContext, Tool, map[string]any, error) (map[string]any, error) {
	return nil, nil
}
func (NoopPlugin) OnAgentError(CallbackContext, error) {}
func (NoopPlugin) OnRunError(ReadonlyContext, error)   {}

// PluginError is a plugin hook's failure, named as google-adk names it.
type PluginError struct {
	Plugin, Hook string
	Err          error
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("Error in plugin '%s' during '%s' callback: %v", e.Plugin, e.Hook, e.Err)
}

func (e *PluginError) Unwrap() error { return e.Err }

// ErrorCode is google-adk's exception name for it: its plugin manager
// raises RuntimeError with this message, the hook's error chained.
func (e *PluginError) ErrorCode() string { return "RuntimeError" }

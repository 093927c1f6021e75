package adkhost

import (
	"github.com/adkhost/adkhost/abi"
)

// CallbackContext is what an agent, model or plugin callback receives.
type CallbackContext struct {
	// Invocation is the invocation the callback runs in (the input's
	// "context"): app, user, session, invocation id, agent, branch, and the
	// user message that started it.
	Invocation abi.InvocationInfo
	// Hook is the hook being run.
	Hook abi.Hook
}

// State reads and writes session state; see StateStore.
func (CallbackContext) State() StateStore { return StateStore{} }

// Actions sets fields of the actions of the event the hook contributes to.
func (CallbackContext) Actions() EventActions { return EventActions{} }

// Artifacts loads, saves and lists the session's artifacts.
func (CallbackContext) Artifacts() ArtifactStore { return ArtifactStore{} }

// Memory searches the user's memory and adds the session to it; see
// MemoryStore.
func (CallbackContext) Memory() MemoryStore { return MemoryStore{} }

// ToolContext is what a tool and the tool callbacks (BeforeTool, AfterTool,
// OnToolError) receive.
type ToolContext struct {
	CallbackContext
	// Tool is the tool being called.
	Tool abi.ToolInfo
	// Confirmation is the user's answer to an earlier RequestConfirmation
	// of this function call, or nil. A tool call and BeforeTool carry one
	// (the host refuses a BeforeTool that changes a confirmed call's
	// arguments).
	Confirmation *abi.ToolConfirmation
}

// FunctionCallID is the id of the function call being run.
func (c ToolContext) FunctionCallID() string { return c.Invocation.FunctionCallID }

// RequestConfirmation asks the user to confirm this function call, with a
// hint and an optional JSON payload (nil for none). The tool is called again
// with Confirmation set once the user answers. It needs abi.CapActions.
func (ToolContext) RequestConfirmation(hint string, payload any) error {
	return EventActions{}.RequestConfirmation(hint, payload)
}

// Callbacks of each hook run in registration order; the first that returns
// a non-nil result or an error ends the chain, as google-adk runs a list of
// callbacks. Values a callback modifies in place (the request of
// BeforeModel, the arguments of BeforeTool, the response, result, message or
// event it is given) are sent back to the host as replacements, so a
// callback may either edit its input or return a new value. Register from an
// init function.

// BeforeAgent registers a before_agent callback (google-adk's
// before_agent_callback). Non-nil content skips the agent and is its answer.
func BeforeAgent(fn func(ctx CallbackContext) (*abi.Content, error)) {
	std.cb.beforeAgent = append(std.cb.beforeAgent, fn)
}

// AfterAgent registers an after_agent callback. Non-nil content is an extra
// event after the agent's.
func AfterAgent(fn func(ctx CallbackContext) (*abi.Content, error)) {
	std.cb.afterAgent = append(std.cb.afterAgent, fn)
}

// BeforeModel registers a before_model callback. A non-nil response skips
// the model call and is its answer; changes made to req in place are the
// request the model receives.
func BeforeModel(fn func(ctx CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error)) {
	std.cb.beforeModel = append(std.cb.beforeModel, fn)
}

// AfterModel registers an after_model callback. A non-nil response (or
// changes made to resp in place) replaces the model's response.
func AfterModel(fn func(ctx CallbackContext, resp *abi.LlmResponse) (*abi.LlmResponse, error)) {
	std.cb.afterModel = append(std.cb.afterModel, fn)
}

// OnModelError registers an on_model_error callback. err carries the model
// error's message. A non-nil response is used instead of failing.
func OnModelError(fn func(ctx CallbackContext, req *abi.LlmRequest, err error) (*abi.LlmResponse, error)) {
	std.cb.onModelError = append(std.cb.onModelError, fn)
}

// BeforeTool registers a before_tool callback. A non-nil result skips the
// tool and is its result; changes made to args in place are the arguments
// the tool receives.
func BeforeTool(fn func(ctx ToolContext, args map[string]any) (map[string]any, error)) {
	std.cb.beforeTool = append(std.cb.beforeTool, fn)
}

// AfterTool registers an after_tool callback. A non-nil result (or changes
// made to result in place) replaces the tool's result.
func AfterTool(fn func(ctx ToolContext, args, result map[string]any) (map[string]any, error)) {
	std.cb.afterTool = append(std.cb.afterTool, fn)
}

// OnToolError registers an on_tool_error callback. err carries the tool
// error's message. A non-nil result is used as the tool's result instead of
// failing.
func OnToolError(fn func(ctx ToolContext, args map[string]any, err error) (map[string]any, error)) {
	std.cb.onToolError = append(std.cb.onToolError, fn)
}

// OnUserMessage registers an on_user_message plugin hook. A non-nil message
// (or changes made to msg in place) replaces the user's message before it
// is stored.
func OnUserMessage(fn func(ctx CallbackContext, msg *abi.Content) (*abi.Content, error)) {
	std.cb.onUserMessage = append(std.cb.onUserMessage, fn)
}

// BeforeRun registers a before_run plugin hook. Non-nil content ends the run
// with this answer.
func BeforeRun(fn func(ctx CallbackContext) (*abi.Content, error)) {
	std.cb.beforeRun = append(std.cb.beforeRun, fn)
}

// OnEvent registers an on_event plugin hook. A non-nil event (or changes
// made to ev in place) replaces the event before it is yielded; it is
// already stored.
func OnEvent(fn func(ctx CallbackContext, ev *abi.Event) (*abi.Event, error)) {
	std.cb.onEvent = append(std.cb.onEvent, fn)
}

// AfterRun registers an after_run plugin hook. Every registered AfterRun
// runs, in order, until one fails.
func AfterRun(fn func(ctx CallbackContext) error) {
	std.cb.afterRun = append(std.cb.afterRun, fn)
}

// OnAgentError registers an on_agent_error plugin hook (google-adk's
// on_agent_error_callback): it is told that an agent's run failed; err
// carries the error's message. It is a notification only: every registered
// OnAgentError runs, in order, and nothing it does changes the run (the
// host only logs a panic).
func OnAgentError(fn func(ctx CallbackContext, err error)) {
	std.cb.onAgentError = append(std.cb.onAgentError, fn)
}

// OnRunError registers an on_run_error plugin hook (google-adk's
// on_run_error_callback): it is told that the run failed; err carries the
// error's message. Like OnAgentError it is a notification only, and like
// the other run-level hooks it can read state but not write it.
func OnRunError(fn func(ctx CallbackContext, err error)) {
	std.cb.onRunError = append(std.cb.onRunError, fn)
}

type callbacks struct {
	beforeAgent, afterAgent, beforeRun []func(CallbackContext) (*abi.Content, error)
	beforeModel                        []func(CallbackContext, *abi.LlmRequest) (*abi.LlmResponse, error)
	afterModel                         []func(CallbackContext, *abi.LlmResponse) (*abi.LlmResponse, error)
	onModelError                       []func(CallbackContext, *abi.LlmRequest, error) (*abi.LlmResponse, error)
	beforeTool                         []func(ToolContext, map[string]any) (map[string]any, error)
	afterTool                          []func(ToolContext, map[string]any, map[string]any) (map[string]any, error)
	onToolError                        []func(ToolContext, map[string]any, error) (map[string]any, error)
	onUserMessage                      []func(CallbackContext, *abi.Content) (*abi.Content, error)
	onEvent                            []func(CallbackContext, *abi.Event) (*abi.Event, error)
	afterRun                           []func(CallbackContext) error
	onAgentError, onRunError           []func(CallbackContext, error)
}

func (c *callbacks) count(h abi.Hook) int {
	switch h {
	case abi.HookBeforeAgent:
		return len(c.beforeAgent)
	case abi.HookAfterAgent:
		return len(c.afterAgent)
	case abi.HookBeforeModel:
		return len(c.beforeModel)
	case abi.HookAfterModel:
		return len(c.afterModel)
	case abi.HookOnModelError:
		return len(c.onModelError)
	case abi.HookBeforeTool:
		return len(c.beforeTool)
	case abi.HookAfterTool:
		return len(c.afterTool)
	case abi.HookOnToolError:
		return len(c.onToolError)
	case abi.HookOnUserMessage:
		return len(c.onUserMessage)
	case abi.HookBeforeRun:
		return len(c.beforeRun)
	case abi.HookOnEvent:
		return len(c.onEvent)
	case abi.HookAfterRun:
		return len(c.afterRun)
	case abi.HookOnAgentError:
		return len(c.onAgentError)
	case abi.HookOnRunError:
		return len(c.onRunError)
	}
	return 0
}

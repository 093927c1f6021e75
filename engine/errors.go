package engine

import (
	"errors"
	"fmt"
)

// ErrNoArtifactService is returned by artifact calls when the Runner has
// no artifact service.
var ErrNoArtifactService = errors.New("artifact service is not configured for this runner")

// LLMCallsLimitExceededError is google-adk's LlmCallsLimitExceededError:
// the invocation made more model calls than RunConfig.MaxLLMCalls.
type LLMCallsLimitExceededError struct{ Limit int }

func (e *LLMCallsLimitExceededError) Error() string {
	return fmt.Sprintf("Max number of llm calls limit of `%d` exceeded", e.Limit)
}

// AgentNotFoundError reports a transfer to, or a resumption of, an agent
// that is not in the tree.
type AgentNotFoundError struct{ Name string }

func (e *AgentNotFoundError) Error() string {
	return fmt.Sprintf("Agent %s not found in the agent tree.", e.Name)
}

// TransferNotAllowedError reports a transfer to an agent that exists but is
// not among the caller's transfer targets.
type TransferNotAllowedError struct{ From, To string }

func (e *TransferNotAllowedError) Error() string {
	return fmt.Sprintf("Agent %s is not allowed to transfer to agent %s.", e.From, e.To)
}

// ModelError wraps a model failure that no on_model_error callback handled.
type ModelError struct {
	Agent string
	Err   error
}

func (e *ModelError) Error() string { return fmt.Sprintf("agent %q: model call: %v", e.Agent, e.Err) }
func (e *ModelError) Unwrap() error { return e.Err }

// ToolError wraps a tool failure that no on_tool_error callback handled.
type ToolError struct {
	Agent, Tool string
	Err         error
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("agent %q: tool %q: %v", e.Agent, e.Tool, e.Err)
}
func (e *ToolError) Unwrap() error { return e.Err }

package engine

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoArtifactService is returned by artifact calls when the Runner has
// no artifact service.
var ErrNoArtifactService = errors.New("artifact service is not configured for this runner")

// errNoArtifactService is what artifact calls return without an artifact
// service: google-adk's ValueError. It matches ErrNoArtifactService.
var errNoArtifactService error = &NoArtifactServiceError{}

// NoArtifactServiceError is the error of an artifact call without an
// artifact service, google-adk's ValueError("Artifact service is not
// initialized."). It matches ErrNoArtifactService.
type NoArtifactServiceError struct{}

func (*NoArtifactServiceError) Error() string { return "Artifact service is not initialized." }

// Is makes errors.Is(err, ErrNoArtifactService) true.
func (*NoArtifactServiceError) Is(target error) bool { return target == ErrNoArtifactService }

// ErrorCode makes the error's event carry google-adk's exception name.
func (*NoArtifactServiceError) ErrorCode() string { return "ValueError" }

// ErrNoMemoryService is matched (errors.Is) by the error of a memory call
// when the Runner has no memory service.
var ErrNoMemoryService = errors.New("memory service is not available")

// NoMemoryServiceError is the error of a memory call without a memory
// service: google-adk's ValueError, with its message for the operation.
// It matches ErrNoMemoryService.
type NoMemoryServiceError struct{ Message string }

func (e *NoMemoryServiceError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNoMemoryService) true.
func (e *NoMemoryServiceError) Is(target error) bool { return target == ErrNoMemoryService }

// ErrorCode makes the error's event carry google-adk's exception name.
func (e *NoMemoryServiceError) ErrorCode() string { return "ValueError" }

// LLMCallsLimitExceededError is google-adk's LlmCallsLimitExceededError:
// the invocation made more model calls than RunConfig.MaxLLMCalls.
type LLMCallsLimitExceededError struct{ Limit int }

func (e *LLMCallsLimitExceededError) Error() string {
	return fmt.Sprintf("Max number of llm calls limit of `%d` exceeded", e.Limit)
}

// ErrorCode makes the error's event carry google-adk's exception name.
func (e *LLMCallsLimitExceededError) ErrorCode() string { return "LlmCallsLimitExceededError" }

// EventsLimitExceededError ends an invocation that would store more events
// than RunConfig.MaxEvents, counting those of the agents it runs as tools.
type EventsLimitExceededError struct {
	Limit int
	// Agent authored the event refused.
	Agent string
}

func (e *EventsLimitExceededError) Error() string {
	return fmt.Sprintf("the invocation stopped at its limit of %d events (RunConfig.MaxEvents, adkhost serve --max-events; those of agents run as tools count too) before storing one more of %q: an agent may be looping without calling the model (a callback answering for it, a LoopAgent of agents that never escalate); bound the loop with max_iterations, or raise the limit", e.Limit, e.Agent)
}

// BytesLimitExceededError ends an invocation that produced more bytes
// than RunConfig.MaxBytes, counting those of the agents it runs as tools.
type BytesLimitExceededError struct {
	Limit int64
	// Agent authored the event refused, or ran the tool whose result was.
	Agent string
	// What was refused: "an event", "the result of tool NAME", "artifact
	// NAME", "an on_event plugin's replacement".
	What string
	// Size is what it would have added.
	Size int64
}

func (e *BytesLimitExceededError) Error() string {
	return fmt.Sprintf("agent %q: the invocation stopped at its limit of %d bytes of events, tool results and artifacts (RunConfig.MaxBytes, adkhost serve --max-run-bytes; those of agents run as tools count too): %s of %d bytes was refused and not stored; have tools and callbacks return less (state, artifacts), or raise the limit", e.Agent, e.Limit, e.What, e.Size)
}

// TooManyFunctionCallsError fails the step of a model response asking for
// more function calls than RunConfig.MaxFunctionCalls; none of them ran.
type TooManyFunctionCallsError struct {
	Agent        string
	Calls, Limit int
}

func (e *TooManyFunctionCallsError) Error() string {
	return fmt.Sprintf("agent %q: the model response asks for %d function calls, over the limit of %d in one response (RunConfig.MaxFunctionCalls, adkhost serve --max-function-calls); none was run: have the model call fewer tools at once, or raise the limit", e.Agent, e.Calls, e.Limit)
}

// MessageError reports a new message the Runner refuses to run, as
// google-adk 2.13 refuses it (ValueError): a function response answering
// no call of the session, or calls of several invocations; function
// responses beside text; function calls in a user message; a message
// without parts under a workflow root.
type MessageError struct{ Message string }

func (e *MessageError) Error() string { return e.Message }

// ErrorCode makes the error carry google-adk's exception name.
func (e *MessageError) ErrorCode() string { return "ValueError" }

// ErrorCoder is implemented by errors that name the error_code of the error
// event the runner stores when an agent fails (google-adk uses the
// exception's class name there).
type ErrorCoder interface {
	error
	ErrorCode() string
}

// TransferError reports a transfer_to_agent that cannot be carried out:
// to the agent itself, to a target its flags forbid, to an unknown agent or
// to an unrelated one. Code is google-adk's exception name.
type TransferError struct {
	Code    string
	Message string
}

func (e *TransferError) Error() string     { return e.Message }
func (e *TransferError) ErrorCode() string { return e.Code }

// ArgumentTypeError is the TypeError Python raises when a built-in tool
// hands a value of the wrong type to a function that needs another (the
// model's arguments reach google-adk's built-in functions unchecked).
type ArgumentTypeError struct{ Message string }

func (e *ArgumentTypeError) Error() string     { return e.Message }
func (e *ArgumentTypeError) ErrorCode() string { return "TypeError" }

// pyTypeName is the name CPython's argument errors give the type of a
// JSON value ("must be str, not int"); a whole float64 is the int a
// model's JSON 5 is in Python.
func pyTypeName(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case float64:
		if t == math.Trunc(t) && math.Abs(t) <= 1<<53 {
			return "int"
		}
	}
	return pyType(v)
}

// agentRunError marks the agent whose run failed first, so the runner can
// record the error event; it is transparent otherwise. author is the
// error event's author (nodeRun.eventAuthor).
type agentRunError struct {
	agent, author, branch, nodePath string
	// scope is the failing run's isolation scope (a task delegation's).
	scope string
	err   error
}

func (e *agentRunError) Error() string { return e.err.Error() }
func (e *agentRunError) Unwrap() error { return e.err }

// pythonTyped is how engine/instruction names its errors' Python types.
type pythonTyped interface{ PythonType() string }

// errorEventFields returns the error_code and error_message of the event
// recording err: the first error in the chain that names a code, else the
// cause of a model or tool failure under the generic code "Error".
func errorEventFields(err error) (code, message string) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch t := e.(type) {
		case ErrorCoder:
			return t.ErrorCode(), t.Error()
		case pythonTyped:
			return t.PythonType(), e.Error()
		}
	}
	var me *ModelError
	if errors.As(err, &me) {
		return "Error", me.Err.Error()
	}
	var te *ToolError
	if errors.As(err, &te) {
		return "Error", te.Err.Error()
	}
	return "Error", err.Error()
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
